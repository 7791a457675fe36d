/** What every fixture shares: the time it is created at and a serial number that keeps it apart. */

/** The time fixtures are created at, unless a test says otherwise. */
export const FIXTURE_TIME = '2026-05-01T12:00:00.000Z';

let serial = 0;
/** A number that differs for every fixture of this process, to keep names and ids apart. */
export function nextSerial(): number {
  return ++serial;
}

/** created_at at FIXTURE_TIME, never updated. */
export const stamps = () => ({ created_at: FIXTURE_TIME, updated_at: null });
