import { codingAgentSuite } from './coding-agent-suite.ts';

// Qwen Code 0.15.10 outgrows a size S sandbox (1 GiB) at the end of a turn whose command printed
// more than a few words (see docs/decisions.md, ACP programs: running them): its standby is size M.
codingAgentSuite('coding_zeta', { standbySize: 'M' });
