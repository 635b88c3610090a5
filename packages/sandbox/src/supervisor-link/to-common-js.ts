/**
 * The supervisor's modules, type-stripped, as CommonJS: an idle Node process that loaded its
 * modules through the ES module loader holds about 1 MiB more than one that loaded them through
 * `require` (measured: 11.6 against 10.5 MiB PSS, the same builtins), and the supervisor is a
 * sandbox's whole idle cost. Its sources keep to the forms turned here, and the build refuses any
 * other: named imports (`import { a, b as c } from '…'`), dynamic imports, and `export` before a
 * function, class or `const` declaration. No top-level await.
 */
export function toCommonJs(code: string, name: string): string {
  const exported: string[] = [];
  let out = code
    .replace(/^import\s*\{([^}]*)\}\s*from\s*(['"][^'"]+['"]);?/gm, (whole, names: string, from: string) => {
      const bindings = names
        .split(',')
        .map((each) => each.trim())
        .filter(Boolean)
        .map((each) => each.replace(/^(\w+)\s+as\s+(\w+)$/, '$1: $2'));
      // As many lines as the import had, so a stack trace's line numbers stay the source's.
      return `const { ${bindings.join(', ')} } = require(${from});${'\n'.repeat(whole.split('\n').length - 1)}`;
    })
    .replace(/\bimport\((['"][^'"]+['"])\)/g, 'Promise.resolve().then(() => require($1))')
    .replace(/^export (async function|function) (\w+)/gm, (_, kind: string, fn: string) => {
      // Function declarations are hoisted: the export can come first, on the same line.
      return `exports.${fn} = ${fn}; ${kind} ${fn}`;
    })
    .replace(/^export class (\w+)/gm, (_, cls: string) => {
      exported.push(cls);
      return `class ${cls}`;
    })
    .replace(/^export const (\w+) = /gm, (_, value: string) => `const ${value} = exports.${value} = `);
  const left = /^\s*(import|export)\b.*$/m.exec(out);
  if (left) throw new Error(`the supervisor's ${name} has a form the build does not turn: ${left[0].trim()}`);
  for (const cls of exported) out += `\nexports.${cls} = ${cls};`;
  return `'use strict'; ${out}`;
}
