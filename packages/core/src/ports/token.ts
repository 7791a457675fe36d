import type { DependencyContainer } from 'tsyringe';

/**
 * A typed DI token. At run time it is a unique symbol, so tsyringe can key registrations on it;
 * at compile time it carries the type that the registration provides.
 */
export type Token<T> = symbol & { readonly __vigilToken?: T };

export function createToken<T>(name: string): Token<T> {
  return Symbol.for(name) as Token<T>;
}

/**
 * What a plugin registers on: the one method of a DI container (tsyringe's
 * `DependencyContainer` has it) that a plugin's register function calls. A plugin takes this
 * rather than the container, so it needs no DI library of its own.
 */
export interface PluginRegistry {
  register<T>(token: Token<T>, provider: { useValue: T }): unknown;
}

export function resolve<T>(container: DependencyContainer, token: Token<T>): T {
  return container.resolve<T>(token);
}

export function resolveAll<T>(container: DependencyContainer, token: Token<T>): T[] {
  return container.isRegistered(token, true) ? container.resolveAll<T>(token) : [];
}
