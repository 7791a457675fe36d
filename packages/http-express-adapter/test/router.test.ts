import express from 'express';
import request from 'supertest';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createVigil } from '@vigil/core';
import { memoryStorage } from '@vigil/core/testing';
import { vigilRouter } from '../src/index.js';
import { apiHarness, BACKENDS, dropPostgresSchema, type ApiHarness } from './support/harness.js';

const tcpBody = { name: 'orders-db', request: { hostname: '127.0.0.1', port: 5432 } };

afterAll(dropPostgresSchema);

describe.each(BACKENDS)('router on %s', (backend) => {
  let h: ApiHarness;
  beforeEach(async () => {
    h = await apiHarness(backend);
  });
  afterEach(() => h.close());

  it('creates a TCP check and reads it back', async () => {
    const created = await h.a.post('/api/v1/checks/tcp', tcpBody).expect(201);
    expect(created.body).toMatchObject({ name: 'orders-db', checkType: 'TCP', request: { hostname: '127.0.0.1', port: 5432 } });
    const read = await h.a.get(`/api/v1/checks/${created.body.id}`).expect(200);
    expect(read.body.id).toBe(created.body.id);
  });
});
