const STEP = /^(?:\.?([^.[\]]+)|\[(\d+)\]|\[(["'])(.*?)\3\])/;

/** Whether `path` is one `readJsonPath` reads: `status`, `$.data.items[0].id`, `$["a b"]`. */
export function isJsonPath(path: string): boolean {
  let rest = path.trim();
  if (rest.startsWith('$')) rest = rest.slice(1);
  while (rest.length > 0) {
    const m = STEP.exec(rest);
    if (!m) return false;
    rest = rest.slice(m[0].length);
  }
  return true;
}

/** The value at a JSON path in a parsed body, or undefined when the path leads nowhere. */
export function readJsonPath(root: unknown, path: string): unknown {
  let rest = path.trim();
  if (rest.startsWith('$')) rest = rest.slice(1);
  let value = root;
  while (rest.length > 0) {
    const m = STEP.exec(rest);
    if (!m) return undefined;
    rest = rest.slice(m[0].length);
    const key = m[1] ?? m[2] ?? m[4] ?? '';
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}
