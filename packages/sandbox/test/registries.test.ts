import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  hostsOf,
  parseDeb822Sources,
  parseOneLineSources,
  parsePipConfig,
  readRegistries,
} from '../src/egress/registries.ts';

/** This process's environment without the package tools' own settings, so a test sets them alone. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!/^(pip_|npm_config_)/i.test(key)) env[key] = value;
  return { ...env, ...extra };
}

function aptDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'paddock-apt-'));
  mkdirSync(join(dir, 'sources.list.d'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe('the registries a runner’s tools are configured with', () => {
  it('reads apt’s one-line and deb822 sources, leaving out comments, disabled stanzas and other files', () => {
    expect(
      parseOneLineSources(
        [
          '# deb http://commented.example/debian bookworm main',
          'deb http://deb.example/debian bookworm main',
          'deb-src [arch=amd64 signed-by=/k.gpg] https://src.example/debian bookworm main',
          'not a source line',
        ].join('\n'),
      ),
    ).toEqual(['http://deb.example/debian', 'https://src.example/debian']);
    expect(
      parseDeb822Sources(
        [
          'Types: deb',
          '# http://snapshot.example/archive',
          'URIs: http://one.example/debian http://two.example/debian',
          'Suites: bookworm',
          '',
          'Types: deb',
          'URIs: https://off.example/apt',
          'Enabled: no',
        ].join('\n'),
      ),
    ).toEqual(['http://one.example/debian', 'http://two.example/debian']);
  });

  it('reads pip’s index settings from `pip config list`, from its files and its variables', () => {
    expect(
      parsePipConfig(
        [
          "global.cert='/etc/ssl/certs/ca-certificates.crt'",
          "global.extra-index-url='https://a.example/simple file:///opt/pypi/simple'",
          ":env:.index-url='https://b.example/simple'",
        ].join('\n'),
      ),
    ).toEqual([
      { key: 'extra-index-url', urls: ['https://a.example/simple', 'file:///opt/pypi/simple'] },
      { key: 'index-url', urls: ['https://b.example/simple'] },
    ]);
    expect(hostsOf(['https://A.example/simple', 'file:///opt/x', 'https://a.example/other'])).toEqual([
      'a.example',
    ]);
  });

  it('asks npm and pip themselves, and reads apt’s sources, for the hosts the `registries` policy allows', async () => {
    const dir = aptDir({
      'sources.list': 'deb http://deb.example/debian bookworm main\n',
      'sources.list.d/extra.sources': 'Types: deb\nURIs: https://extra.example/apt\nSuites: stable\n',
      'sources.list.d/old.list.disabled': 'deb http://disabled.example/debian bookworm main\n',
    });
    const { sources, hosts } = await readRegistries({
      aptDir: dir,
      env: cleanEnv({
        npm_config_registry: 'https://npm.mirror.example/',
        PIP_CONFIG_FILE: '/dev/null',
        PIP_INDEX_URL: 'https://pypi.mirror.example/simple',
      }),
    });
    expect(sources.npm).toContain('https://npm.mirror.example/');
    expect(sources.pip).toEqual(['https://pypi.mirror.example/simple']);
    expect(sources.apt).toEqual(['http://deb.example/debian', 'https://extra.example/apt']);
    expect(hosts).toEqual(
      expect.arrayContaining(['npm.mirror.example', 'pypi.mirror.example', 'deb.example']),
    );
    expect(hosts).not.toContain('disabled.example');
  });

  it('takes pip’s own default index, and where it downloads from, when none is set', async () => {
    const { sources } = await readRegistries({
      aptDir: aptDir({}),
      env: cleanEnv({ PIP_CONFIG_FILE: '/dev/null' }),
    });
    // What pip itself says its default is: an index and a separate host for the files.
    expect(sources.pip).toHaveLength(2);
    expect(hostsOf(sources.pip)).toHaveLength(2);
  });
});
