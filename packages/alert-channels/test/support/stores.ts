// The delivery tests' stores: storage-knex's fresh SQLite files and PostgreSQL schemas.
import type { VigilStorage } from '@vigil/core';
import { freshStore, STORES } from '../../../storage-knex/test/support/fresh-store.js';

export { STORES };

/** A fresh store of that kind; closing it removes its file or its schema. */
export const freshStorage = (kind: 'sqlite' | 'postgres'): Promise<VigilStorage> => freshStore(kind, 'vigil_alerts');
