import { readFileSync } from 'node:fs';
import type { HarnessProfileInput } from '@paddock/protocol';

/** pi's bridge to the agent's MCP servers, an extension in its home (see the file). */
const piMcpBridge = readFileSync(new URL('./pi-mcp-bridge.js', import.meta.url), 'utf8');

/**
 * Codex's metadata for the agent's model (a `ModelInfo` of its model catalog, every field it
 * requires): the tools a model of today's OpenAI API takes, shell commands as one string. Codex
 * ships metadata for OpenAI's own models only; the instructions are Paddock's, short, as the
 * agent's own come in AGENTS.md.
 */
const codexModelInfo = {
  slug: '{{model}}',
  display_name: '{{model}}',
  description: null,
  supported_reasoning_levels: [],
  shell_type: 'shell_command',
  visibility: 'list',
  supported_in_api: true,
  priority: 0,
  upgrade: null,
  base_instructions: [
    'You are Codex, a coding agent working in the workspace you share with the user.',
    'Use your tools to read files, run commands and make changes; check your work before you answer.',
    'Answer concisely.',
  ].join(' '),
  supports_reasoning_summaries: false,
  support_verbosity: false,
  default_verbosity: null,
  // Only `freeform` exists here, a custom tool a gateway's other dialects cannot carry: no apply_patch
  // tool, files are edited through the shell.
  apply_patch_tool_type: null,
  truncation_policy: { mode: 'bytes', limit: 10_000 },
  supports_parallel_tool_calls: false,
  experimental_supported_tools: [],
};

/**
 * The programs behind the six ACP harness values (D9), pinned. Settings follow what
 * `../shared/research/coding-agent-clis.md` measured: every outbound call off but the gateway.
 * `PADDOCK_GATEWAY_TOKEN` carries the thread's token where a program reads its key from a variable
 * its settings name.
 */
export const builtinProfiles: Record<string, HarnessProfileInput> = {
  coding_beta: {
    program: 'Claude Code',
    version: '0.23.1',
    packages: { '@zed-industries/claude-agent-acp': '0.23.1' },
    command: ['claude-agent-acp'],
    dialect: 'anthropic',
    token_env: 'ANTHROPIC_AUTH_TOKEN',
    env: {
      ANTHROPIC_BASE_URL: '{{gateway_url}}',
      ANTHROPIC_MODEL: '{{model}}',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
    },
    instructions_file: '.claude/CLAUDE.md',
    skills_dir: '.claude/skills',
    // claude-agent-acp picks its own default model whatever the settings say.
    set_model: true,
  },
  coding_gamma: {
    program: 'Codex',
    version: '0.16.0',
    packages: { '@zed-industries/codex-acp': '0.16.0' },
    // The package's own `codex-acp` is a Node launcher that waits beside the native program it starts
    // (21 MiB in every Codex sandbox): the native one, from the optional package of this platform.
    command: ['codex-acp-{{platform}}'],
    dialect: 'openai-responses',
    token_env: 'PADDOCK_GATEWAY_TOKEN',
    env: { CODEX_HOME: '{{home}}/.codex' },
    files: {
      '.codex/config.toml': [
        'model = "{{model}}"',
        'model_provider = "paddock"',
        // Without metadata for the model Codex tells the user so, in the answer (see models.json).
        'model_catalog_json = "{{home}}/.codex/models.json"',
        'approval_policy = "never"',
        'sandbox_mode = "danger-full-access"',
        'check_for_update_on_startup = false',
        '',
        '[analytics]',
        'enabled = false',
        '',
        '[model_providers.paddock]',
        'name = "Paddock"',
        'base_url = "{{gateway_url}}"',
        'env_key = "PADDOCK_GATEWAY_TOKEN"',
        'wire_api = "responses"',
        'supports_websockets = false',
        'request_max_retries = 0',
        'stream_max_retries = 0',
        '',
      ].join('\n'),
      '.codex/models.json': JSON.stringify({ models: [codexModelInfo] }),
    },
    instructions_file: '.codex/AGENTS.md',
    skills_dir: '.codex/skills',
  },
  coding_delta: {
    program: 'Gemini CLI',
    version: '0.61.0',
    packages: { '@google/gemini-cli': '0.61.0' },
    command: ['gemini', '--acp', '--skip-trust', '-m', '{{model}}'],
    dialect: 'gemini',
    token_env: 'GEMINI_API_KEY',
    // It would start itself again as a child process (to raise its heap limit): half its start-up.
    env: { GOOGLE_GEMINI_BASE_URL: '{{gateway_url}}', GEMINI_CLI_NO_RELAUNCH: 'true' },
    files: {
      '.gemini/settings.json': JSON.stringify({
        security: { auth: { selectedType: 'gemini-api-key' } },
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
        general: { disableAutoUpdate: true, disableUpdateNag: true },
        // Through a pty, 0.61.0's ACP reports a shell command's output as terminal cells it then
        // drops (the tool call ends with no content); without one the output is text.
        tools: { shell: { enableInteractiveShell: false } },
      }),
    },
    instructions_file: '.gemini/GEMINI.md',
    skills_dir: '.gemini/skills',
    // Its ACP sessions do not survive a new process (the research notes): the transcript is given instead.
    load_session: false,
  },
  coding_epsilon: {
    program: 'OpenCode',
    version: '1.18.33',
    packages: { 'opencode-ai': '1.18.33', 'opencode-linux-x64': '1.18.33' },
    // opencode-ai's own `opencode` is a stub until its postinstall runs, and install scripts are
    // never run (ProgramCache): start the platform package's binary, which needs nothing else.
    command: ['{{install}}/node_modules/opencode-linux-x64/bin/opencode', 'acp'],
    dialect: 'openai-chat',
    token_env: 'PADDOCK_GATEWAY_TOKEN',
    env: {
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      OPENCODE_DISABLE_AUTOUPDATE: '1',
      OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
    },
    files: {
      '.config/opencode/opencode.json': JSON.stringify({
        autoupdate: false,
        share: 'disabled',
        // Its git snapshot of the workspace at every step is for its own undo, which no one here uses.
        snapshot: false,
        // Its title agent makes a second model call beside the first answer, billed to the thread.
        agent: { title: { disable: true } },
        model: 'paddock/{{model}}',
        provider: {
          paddock: {
            npm: '@ai-sdk/openai-compatible',
            name: 'Paddock',
            options: { baseURL: '{{gateway_url}}', apiKey: '{env:PADDOCK_GATEWAY_TOKEN}' },
            models: { '{{model}}': { name: '{{model}}' } },
          },
        },
      }),
    },
    instructions_file: '.config/opencode/AGENTS.md',
    skills_dir: '.config/opencode/skill',
    // Its first prompt in a process starts its file watcher and "location services" first (a second).
    warm_prompt: true,
  },
  coding_zeta: {
    program: 'Qwen Code',
    version: '0.15.10',
    packages: { '@qwen-code/qwen-code': '0.15.10' },
    // Approve every tool itself (the sandbox is the boundary): answering its permission request with
    // "always" makes 0.15.10 write an allow rule into the workspace's own .qwen/settings.json.
    command: ['qwen', '--acp', '--auth-type', 'openai', '--approval-mode', 'yolo'],
    dialect: 'openai-chat',
    token_env: 'OPENAI_API_KEY',
    // As Gemini CLI's: no second start of itself as a child process.
    env: { OPENAI_BASE_URL: '{{gateway_url}}', OPENAI_MODEL: '{{model}}', QWEN_CODE_NO_RELAUNCH: 'true' },
    files: {
      '.qwen/settings.json': JSON.stringify({
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
        // 0.15.10 hides every MCP tool behind its tool_search tool; without that tool it offers them.
        permissions: { deny: ['tool_search'] },
        // With a pty for its shell tool, 0.15.10 in the sandbox exited (code 1, nothing on stderr)
        // during or just after most turns that ran a command; without one it did not.
        tools: { shell: { enableInteractiveShell: false } },
      }),
    },
    instructions_file: '.qwen/QWEN.md',
    skills_dir: '.qwen/skills',
  },
  coding_eta: {
    program: 'pi',
    version: '0.73.1',
    packages: {
      '@mariozechner/pi-coding-agent': '0.73.1',
      'pi-acp': '0.0.23',
      // For the MCP bridge: pi has no MCP client, and pi-acp drops ACP's mcpServers.
      '@modelcontextprotocol/sdk': '1.32.2',
    },
    command: ['pi-acp'],
    dialect: 'openai-chat',
    token_env: 'PADDOCK_GATEWAY_TOKEN',
    env: { PI_ACP_PI_COMMAND: '{{install}}/node_modules/.bin/pi', PI_OFFLINE: '1', PI_TELEMETRY: '0' },
    files: {
      '.pi/agent/models.json': JSON.stringify({
        providers: {
          paddock: {
            baseUrl: '{{gateway_url}}',
            api: 'openai-completions',
            apiKey: 'PADDOCK_GATEWAY_TOKEN',
            compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
            models: [{ id: '{{model}}' }],
          },
        },
      }),
      // quietStartup: pi-acp would otherwise run `pi --version` (a second start of pi) at every session.
      '.pi/agent/settings.json': JSON.stringify({
        defaultProvider: 'paddock',
        defaultModel: '{{model}}',
        quietStartup: true,
      }),
      '.pi/agent/extensions/paddock-mcp.js': piMcpBridge,
    },
    mcp_servers_env: 'PADDOCK_MCP_SERVERS',
    instructions_file: '.pi/agent/AGENTS.md',
    skills_dir: '.pi/agent/skills',
  },
};
