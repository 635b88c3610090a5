#!/usr/bin/env node
// The `paddock` program: its source is TypeScript, run as it is by Node 24's type stripping (the
// project pins Node 24; `npx paddock` puts the pinned one first on PATH).
const [major] = process.versions.node.split('.').map(Number);
if (major < 24) {
  process.stderr.write(
    `paddock: needs Node.js 24 or later (this is ${process.version}); run it as \`npx paddock\`\n`,
  );
  process.exit(2);
}
await import('../src/main.ts');
