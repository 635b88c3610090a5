import { codingAgentSuite } from './coding-agent-suite.ts';

codingAgentSuite('coding_beta', { asksPermission: true });
