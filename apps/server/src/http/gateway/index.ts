import type { Services } from '@paddock/core';
import type { ModelRouter } from '@paddock/models';
import type { FastifyInstance } from 'fastify';
import { openAIGatewayRoutes } from './openai.ts';

/**
 * The model gateway (D16): one router of models behind every client dialect, so a sandbox reaches
 * any model with its thread token and upstream provider keys never enter a sandbox.
 */
export function gatewayRoutes(app: FastifyInstance, services: Services, router: ModelRouter): void {
  openAIGatewayRoutes(app, services, router);
}
