import { randomBytes, randomUUID } from 'node:crypto';
import type { IdGenerator } from '../ports/id-generator.js';

/** Ids from Node's crypto: v4 UUIDs and base64url tokens. */
export const randomIdGenerator: IdGenerator = {
  uuid: () => randomUUID(),
  token: (bytes = 24) => randomBytes(bytes).toString('base64url'),
};
