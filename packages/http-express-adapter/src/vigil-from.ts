import type { DependencyContainer } from 'tsyringe';
import { resolve, VIGIL, type Vigil } from '@vigil/core';

/** The Vigil instance from a container (VIGIL token) or the instance itself. */
export function vigilFrom(source: Vigil | DependencyContainer): Vigil {
  const maybe = source as Partial<DependencyContainer>;
  if (typeof maybe.resolve === 'function' && typeof maybe.isRegistered === 'function') {
    return resolve(source as DependencyContainer, VIGIL);
  }
  return source as Vigil;
}
