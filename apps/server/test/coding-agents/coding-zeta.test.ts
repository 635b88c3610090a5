import { codingAgentSuite } from './coding-agent-suite.ts';

// Qwen Code 0.15.10 holds some 800 MB for a few seconds at its first shell command, which leaves a
// size S standby (1 GiB) no room (see docs/decisions.md, ACP programs: running them): its standby is M.
codingAgentSuite('coding_zeta', { standbySize: 'M' });
