import { codingAgentSuite } from './coding-agent-suite.ts';

codingAgentSuite('coding_delta', { asksPermission: true });
