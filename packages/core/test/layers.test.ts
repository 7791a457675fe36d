import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// What each layer of core may depend on, read from the sources: ports are interfaces and tokens
// (the one value they import is createToken), and the rules are pure, so they import no port.

const srcDir = (folder: string) => fileURLToPath(new URL(`../src/${folder}/`, import.meta.url));

/** One import or re-export of a file: where from, and the value names it brings (type-only ones left out). */
interface Dependency {
  from: string;
  kind: 'import' | 'export';
  values: string[];
}

function dependencies(file: string): Dependency[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const out: Dependency[] = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
      const clause = statement.importClause;
      const values: string[] = [];
      if (!clause) values.push('(side effect)');
      else if (!clause.isTypeOnly) {
        if (clause.name) values.push('default');
        const bindings = clause.namedBindings;
        if (bindings && ts.isNamespaceImport(bindings)) values.push('*');
        if (bindings && ts.isNamedImports(bindings)) {
          values.push(...bindings.elements.filter((e) => !e.isTypeOnly).map((e) => e.name.text));
        }
      }
      out.push({ from: statement.moduleSpecifier.text, kind: 'import', values });
    }
    if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)) {
      const clause = statement.exportClause;
      const values = statement.isTypeOnly
        ? []
        : !clause || ts.isNamespaceExport(clause)
          ? ['*']
          : clause.elements.filter((e) => !e.isTypeOnly).map((e) => e.name.text);
      out.push({ from: statement.moduleSpecifier.text, kind: 'export', values });
    }
  }
  return out;
}

const sources = (folder: string) =>
  readdirSync(srcDir(folder))
    .filter((name) => name.endsWith('.ts'))
    .map((name) => ({ name, deps: dependencies(`${srcDir(folder)}${name}`) }));

/**
 * The values a port file may declare: its DI token (`createToken(...)`), and in token.ts the token
 * helpers themselves. Default implementations live in defaults/, helpers for plugins in the kits.
 */
function declaredValues(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const out: string[] = [];
  for (const statement of source.statements) {
    if (ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement)) out.push(statement.name?.text ?? '(anonymous)');
    if (ts.isVariableStatement(statement)) {
      for (const d of statement.declarationList.declarations) {
        const init = d.initializer;
        const isToken = init && ts.isCallExpression(init) && ts.isIdentifier(init.expression) && init.expression.text === 'createToken';
        if (!isToken) out.push(d.name.getText(source));
      }
    }
  }
  return out;
}

describe('layers of core', () => {
  it('ports declare and import no value but their tokens', () => {
    const files = sources('ports');
    expect(files.map((f) => f.name)).toContain('token.ts');
    for (const { name, deps } of files) {
      const imported = deps
        .filter((d) => d.kind === 'import')
        .flatMap((d) => d.values.map((v) => `${d.from} ${v}`))
        .filter((v) => v !== './token.js createToken');
      const reexported = deps.filter((d) => d.kind === 'export').flatMap((d) => d.values.map((v) => `${d.from} ${v}`));
      expect(imported, `values ${name} imports`).toEqual([]);
      expect(reexported, `values ${name} re-exports`).toEqual([]);
      expect(declaredValues(`${srcDir('ports')}${name}`), `values ${name} declares`).toEqual(name === 'token.ts' ? ['createToken', 'resolve', 'resolveAll'] : []);
    }
  });

  it('rules import nothing from ports', () => {
    const files = sources('rules');
    expect(files.length).toBeGreaterThan(0);
    for (const { name, deps } of files) {
      expect(deps.filter((d) => d.from.startsWith('../ports/')).map((d) => d.from), `ports ${name} imports`).toEqual([]);
    }
  });

  it('reads type-only imports as no value and re-exports as values', () => {
    // The parse the two checks above rely on, on a file of each kind of statement.
    const file = fileURLToPath(new URL('../src/ports/storage.ts', import.meta.url));
    const deps = dependencies(file);
    expect(deps).toContainEqual({ from: './token.js', kind: 'import', values: ['createToken'] });
    expect(deps).toContainEqual({ from: './repository.js', kind: 'export', values: [] });
    expect(deps.find((d) => d.from === '../model/account.js')).toEqual({ from: '../model/account.js', kind: 'import', values: [] });
  });
});
