/**
 * The error-group routes of the HTTP API through the real Express router: a check's groups and a test
 * project's.
 * Every route: its success case, the constraints of its schema (400 naming the field), 401 without
 * credentials, 403 for another account's header and 404 for another account's id (which stays as it was).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expect400, expect404, expectAuthGuards, expectHiddenFromB } from './support/expect.js';
import { T0, MISSING_UUID, ok, ids, describeOnBackends, resourceBuilders } from './support/routes.js';

describeOnBackends('resource routes on %s', { rateLimit: false }, (h) => {
  const { newCheck } = resourceBuilders(() => h);

  describe('error groups', () => {
    const hash = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
    const record = (checkId: string, message: string, at = T0, accountId = h.a.accountId) =>
      h.vigil.errorGroups.recordOccurrence(accountId, checkId, message, at);

    it('GET /v1/error-groups/checks/{checkId} lists the check\'s groups: one per cleaned message, paged by limit and page', async () => {
      const check = await newCheck();
      const other = await newCheck(h.a, { name: 'other' });
      await record(check.id, 'connect ECONNREFUSED 10.0.0.1:5432');
      await record(check.id, 'connect ECONNREFUSED 10.0.0.2:5432', '2026-05-01T12:05:00.000Z');
      await record(check.id, 'Timeout after 5000 ms');
      await record(other.id, 'connect ECONNREFUSED 10.0.0.1:5432');
      const groups = await ok(h.a.get(`/api/v1/error-groups/checks/${check.id}`));
      expect(groups).toHaveLength(2);
      const refused = groups.find((g: { rawErrorMessage: string }) => g.rawErrorMessage.startsWith('connect'));
      expect(refused).toEqual({
        id: expect.any(String),
        checkId: check.id,
        errorHash: expect.stringMatching(/^[0-9a-f]{64}$/),
        rawErrorMessage: 'connect ECONNREFUSED 10.0.0.2:5432',
        cleanedErrorMessage: expect.any(String),
        firstSeen: T0,
        lastSeen: '2026-05-01T12:05:00.000Z',
        archivedUntilNextEvent: false,
        archivedForever: false,
        rootCauseAnalyses: [],
      });
      expect(refused.cleanedErrorMessage).not.toContain('10.0.0');
      expect(refused.errorHash).toBe(hash(refused.cleanedErrorMessage));
      const page2 = await ok(h.a.get(`/api/v1/error-groups/checks/${check.id}?limit=1&page=2`));
      expect(page2).toHaveLength(1);
      const page1 = await ok(h.a.get(`/api/v1/error-groups/checks/${check.id}?limit=1`));
      expect([...ids(page1), ...ids(page2)].sort()).toEqual(ids(groups).sort());
      expect(await ok(h.a.get(`/api/v1/error-groups/checks/${check.id}?page=2`))).toEqual([]);
      expect(await ok(h.a.get(`/api/v1/error-groups/checks/${other.id}`))).toHaveLength(1);

      expect400(await h.a.get(`/api/v1/error-groups/checks/${check.id}?limit=0`), 'query', 'limit');
      expect400(await h.a.get(`/api/v1/error-groups/checks/${check.id}?limit=101`), 'query', 'limit');
      expect400(await h.a.get(`/api/v1/error-groups/checks/${check.id}?page=0`), 'query', 'page');
      expect404(await h.a.get(`/api/v1/error-groups/checks/${MISSING_UUID}`));
    });

    it('GET /v1/error-groups/{id} reads a group; PATCH archives it until the next event or for ever', async () => {
      const check = await newCheck();
      const group = await record(check.id, 'Timeout after 5000 ms');
      const path = `/api/v1/error-groups/${group.id}`;
      const read = await ok(h.a.get(path));
      expect(read).toEqual({
        id: group.id, checkId: check.id, errorHash: hash(read.cleanedErrorMessage), rawErrorMessage: 'Timeout after 5000 ms',
        cleanedErrorMessage: expect.any(String), firstSeen: T0, lastSeen: T0, archivedUntilNextEvent: false, archivedForever: false, rootCauseAnalyses: [],
      });

      const archived = await ok(h.a.patch(path, { archivedUntilNextEvent: true }));
      expect(archived).toEqual({ ...read, archivedUntilNextEvent: true });
      expect(await ok(h.a.get(path))).toEqual(archived);
      // The next occurrence unarchives it.
      await record(check.id, 'Timeout after 6000 ms', '2026-05-01T13:00:00.000Z');
      expect(await ok(h.a.get(path))).toMatchObject({ archivedUntilNextEvent: false, lastSeen: '2026-05-01T13:00:00.000Z' });

      const forever = await ok(h.a.patch(path, { archiveForEver: true }));
      expect(forever).toMatchObject({ archivedUntilNextEvent: true, archivedForever: true });
      await record(check.id, 'Timeout after 7000 ms', '2026-05-01T14:00:00.000Z');
      expect(await ok(h.a.get(path))).toMatchObject({ archivedUntilNextEvent: true, archivedForever: true, lastSeen: '2026-05-01T14:00:00.000Z' });

      const unarchived = await ok(h.a.patch(path, { archivedUntilNextEvent: false }));
      expect(unarchived).toMatchObject({ archivedUntilNextEvent: false, archivedForever: false });
      expect404(await h.a.get(`/api/v1/error-groups/${MISSING_UUID}`));
      expect404(await h.a.patch(`/api/v1/error-groups/${MISSING_UUID}`, { archivedUntilNextEvent: true }));
    });

    it('PATCH /v1/error-groups/{id} refuses non-boolean flags naming the field and changes nothing', async () => {
      const check = await newCheck();
      const group = await record(check.id, 'Timeout after 5000 ms');
      const path = `/api/v1/error-groups/${group.id}`;
      const before = await ok(h.a.get(path));
      expect400(await h.a.patch(path, { archivedUntilNextEvent: 'yes' }), 'payload', 'archivedUntilNextEvent');
      expect400(await h.a.patch(path, { archiveForEver: 1 }), 'payload', 'archiveForEver');
      expect400(await h.a.patch(path, { archiveForEver: null, archivedUntilNextEvent: 'true' }), 'payload', 'archiveForEver', 'archivedUntilNextEvent');
      expect(await ok(h.a.get(path))).toEqual(before);
    });

    it('GET /v1/test-session-error-groups/projects/{projectId} lists the project\'s groups with environments and test metadata', async () => {
      const meta = { projectName: 'web-e2e', testFile: 'checks/login.spec.ts', testTitle: 'logs in', suitePath: ['auth'] };
      const occur = (projectId: string, environment: string | null, raw: string, at = T0, accountId = h.a.accountId) =>
        h.vigil.errorGroups.recordTestSessionOccurrence(accountId, { projectId, environment, raw, at, pwtMetadata: meta });
      await occur('web-e2e', 'staging', 'expect(received).toBe(expected) at line 12');
      await occur('web-e2e', 'production', 'expect(received).toBe(expected) at line 13', '2026-05-01T12:10:00.000Z');
      await occur('web-e2e', null, 'Navigation timeout of 30000 ms exceeded');
      await occur('api-e2e', 'staging', 'socket hang up');
      await occur('web-e2e', 'staging', 'secret of b', T0, h.b.accountId);

      const groups = await ok(h.a.get('/api/v1/test-session-error-groups/projects/web-e2e'));
      expect(groups).toHaveLength(2);
      const assertion = groups.find((g: { rawErrorMessage: string }) => g.rawErrorMessage.startsWith('expect'));
      expect(assertion).toEqual({
        id: expect.any(String),
        projectId: 'web-e2e',
        environments: expect.any(Array),
        errorHash: expect.stringMatching(/^[0-9a-f]{64}$/),
        rawErrorMessage: 'expect(received).toBe(expected) at line 13',
        cleanedErrorMessage: expect.any(String),
        firstSeen: T0,
        lastSeen: '2026-05-01T12:10:00.000Z',
        archivedUntilNextEvent: false,
        archivedForever: false,
        rootCauseAnalyses: [],
        pwtMetadata: [meta],
      });
      expect([...assertion.environments].sort()).toEqual(['production', 'staging']);
      expect(assertion.errorHash).toBe(hash(assertion.cleanedErrorMessage));
      expect(JSON.stringify(groups)).not.toContain('secret of b');
      expect(await ok(h.a.get('/api/v1/test-session-error-groups/projects/api-e2e'))).toHaveLength(1);
      expect(await ok(h.a.get('/api/v1/test-session-error-groups/projects/unknown-project'))).toEqual([]);
      // Another account sees only its own groups of a project with the same name.
      const theirs = await ok(h.b.get('/api/v1/test-session-error-groups/projects/web-e2e'));
      expect(theirs.map((g: { rawErrorMessage: string }) => g.rawErrorMessage)).toEqual(['secret of b']);
      expect(await ok(h.b.get('/api/v1/test-session-error-groups/projects/api-e2e'))).toEqual([]);
    });

    describe('of a test project', () => {
      const meta = { projectName: 'web-e2e', testFile: 'checks/login.spec.ts', testTitle: 'logs in', suitePath: ['auth'] };
      const occur = (raw: string, at = T0, accountId = h.a.accountId, environment = 'staging') =>
        h.vigil.errorGroups.recordTestSessionOccurrence(accountId, { projectId: 'web-e2e', environment, raw, at, pwtMetadata: meta });
      /** The group as the project's list shows it to a. */
      const listed = async (id: string) =>
        (await ok(h.a.get('/api/v1/test-session-error-groups/projects/web-e2e'))).find((g: { id: string }) => g.id === id);

      it('PATCH /v1/error-groups/{id} archives a project\'s group until the next event or for ever, and unarchives it; GET reads it', async () => {
        const group = await occur('Navigation timeout of 30000 ms exceeded');
        const path = `/api/v1/error-groups/${group.id}`;
        const before = await listed(group.id);
        expect(before).toMatchObject({ projectId: 'web-e2e', environments: ['staging'], pwtMetadata: [meta], archivedUntilNextEvent: false, archivedForever: false });
        expect(await ok(h.a.get(path))).toEqual(before);

        const archived = await ok(h.a.patch(path, { archivedUntilNextEvent: true }));
        expect(archived).toEqual({ ...before, archivedUntilNextEvent: true });
        expect(await listed(group.id)).toEqual(archived);
        expect(await ok(h.a.get(path))).toEqual(archived);
        // The next occurrence unarchives it.
        await occur('Navigation timeout of 45000 ms exceeded', '2026-05-01T13:00:00.000Z', h.a.accountId, 'production');
        const reopened = await listed(group.id);
        expect(reopened).toMatchObject({ archivedUntilNextEvent: false, archivedForever: false, lastSeen: '2026-05-01T13:00:00.000Z' });
        expect([...reopened.environments].sort()).toEqual(['production', 'staging']);

        const forever = await ok(h.a.patch(path, { archiveForEver: true }));
        expect(forever).toEqual({ ...reopened, archivedUntilNextEvent: true, archivedForever: true });
        await occur('Navigation timeout of 60000 ms exceeded', '2026-05-01T14:00:00.000Z');
        expect(await listed(group.id)).toMatchObject({ archivedUntilNextEvent: true, archivedForever: true, lastSeen: '2026-05-01T14:00:00.000Z' });

        const unarchived = await ok(h.a.patch(path, { archivedUntilNextEvent: false }));
        expect(unarchived).toMatchObject({ id: group.id, projectId: 'web-e2e', archivedUntilNextEvent: false, archivedForever: false });
        expect(unarchived).not.toHaveProperty('checkId');
        expect(await listed(group.id)).toEqual(unarchived);
      });

      it('PATCH /v1/error-groups/{id} refuses a bad body for a project\'s group naming the field, and changes nothing', async () => {
        const group = await occur('Navigation timeout of 30000 ms exceeded');
        const path = `/api/v1/error-groups/${group.id}`;
        const archived = await ok(h.a.patch(path, { archiveForEver: true }));
        expect(archived).toMatchObject({ archivedUntilNextEvent: true, archivedForever: true });
        expect400(await h.a.patch(path, { archivedUntilNextEvent: 'no' }), 'payload', 'archivedUntilNextEvent');
        expect400(await h.a.patch(path, { archiveForEver: 0 }), 'payload', 'archiveForEver');
        expect400(await h.a.patch(path, { archiveForEver: false, archivedUntilNextEvent: 'false' }), 'payload', 'archivedUntilNextEvent');
        expect(await listed(group.id)).toEqual(archived);
        expect(await ok(h.a.get(path))).toEqual(archived);
      });

      it('401 and 403 on its PATCH; an unknown id and another account\'s group answer the same 404, and the group stays as it was', async () => {
        const group = await occur('Navigation timeout of 30000 ms exceeded');
        const path = `/api/v1/error-groups/${group.id}`;
        await expectAuthGuards(h, [['get', path], ['patch', path, { archivedUntilNextEvent: true }]]);
        const before = await listed(group.id);
        await expectHiddenFromB(h, [
          ['get', path],
          ['patch', path, { archivedUntilNextEvent: true }],
          ['patch', path, { archiveForEver: true }],
        ]);
        const foreign = await h.b.patch(path, { archivedUntilNextEvent: true });
        const unknown = await h.a.patch(`/api/v1/error-groups/${MISSING_UUID}`, { archivedUntilNextEvent: true });
        expect404(unknown);
        expect(foreign.body).toEqual(unknown.body);
        expect(await listed(group.id)).toEqual(before);
        // b's own group of a project with the same name is b's to archive, and a's stays as it was.
        const theirs = await occur('Navigation timeout of 30000 ms exceeded', T0, h.b.accountId);
        expect(await ok(h.b.patch(`/api/v1/error-groups/${theirs.id}`, { archivedUntilNextEvent: true }))).toMatchObject({ archivedUntilNextEvent: true });
        expect(await listed(group.id)).toEqual(before);
        expect(await ok(h.a.patch(path, { archivedUntilNextEvent: true }))).toEqual({ ...before, archivedUntilNextEvent: true });
      });
    });

    it('401 and 403 on every error-group route; 404 for another account\'s check and group, which stays as it was', async () => {
      const check = await newCheck();
      const group = await record(check.id, 'Timeout after 5000 ms');
      const path = `/api/v1/error-groups/${group.id}`;
      await expectAuthGuards(h, [
        ['get', `/api/v1/error-groups/checks/${check.id}`],
        ['get', path],
        ['patch', path, { archivedUntilNextEvent: true }],
        ['get', '/api/v1/test-session-error-groups/projects/web-e2e'],
      ]);
      const before = await ok(h.a.get(path));
      await expectHiddenFromB(h, [
        ['get', `/api/v1/error-groups/checks/${check.id}`],
        ['get', path],
        ['patch', path, { archivedUntilNextEvent: true }],
        ['patch', path, { archiveForEver: true }],
      ]);
      expect(await ok(h.a.get(path))).toEqual(before);
    });
  });
});
