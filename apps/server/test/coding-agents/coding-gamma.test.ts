import { codingAgentSuite } from './coding-agent-suite.ts';

// Its package's `codex-acp` is a Node script that starts the native program of the platform's package.
codingAgentSuite('coding_gamma', {
  wrapped: {
    launcher: /\/codex-acp(\.js)?( |$)/m,
    native: new RegExp(`/codex-acp-${process.platform}-${process.arch}( |$)`, 'm'),
  },
});
