import type { ResourceKind } from '../model/managed-resource.js';

/**
 * Marks constructs. Recognised by this registered symbol rather than by `instanceof`, because the
 * construct classes may be loaded twice (ESM and CJS, or `@vigil/core` and `@vigil/core/constructs`).
 */
export const CONSTRUCT_BRAND = Symbol.for('vigil.construct');

/**
 * A resource described in code: its kind, a logical id that names it in code (stable when its
 * name changes), and the fields of its create body. `vigil.apply` creates, updates or deletes the
 * resource so that it matches; the props are validated then, by the same schemas as the API.
 */
export abstract class Construct<TProps extends object = object> {
  readonly [CONSTRUCT_BRAND] = true;
  /** The resource it describes. */
  abstract readonly kind: ResourceKind;
  /** The class name, for messages: `TcpCheck "orders-db"`. */
  abstract readonly construct: string;

  constructor(
    readonly logicalId: string,
    readonly props: Readonly<TProps>,
  ) {}

  toString(): string {
    return `${this.construct} "${this.logicalId}"`;
  }
}

export function isConstruct(value: unknown): value is Construct {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[CONSTRUCT_BRAND] === true;
}

/** A construct of a kind, or the logical id of one applied in the same set. */
export type Ref<T extends Construct> = T | string;
