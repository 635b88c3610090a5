import type {
  LanguageModelV4CallOptions,
  LanguageModelV4FunctionTool,
  LanguageModelV4ToolChoice,
} from '@ai-sdk/provider';
import type { GeminiRequest } from './gemini-request.ts';
import { geminiSchemaToJsonSchema } from './gemini-schema.ts';

/** JSON mode: `responseJsonSchema` as it is, or `responseSchema` (Gemini's schema) normalized. */
export function responseFormatOf(
  config: GeminiRequest['generationConfig'],
): LanguageModelV4CallOptions['responseFormat'] {
  if (config?.responseMimeType !== 'application/json') return undefined;
  const schema =
    (config.responseJsonSchema as LanguageModelV4FunctionTool['inputSchema'] | null | undefined) ??
    (config.responseSchema ? geminiSchemaToJsonSchema(config.responseSchema) : undefined);
  return { type: 'json', schema };
}

/** The function declarations offered to the model, and the tool choice `toolConfig` makes. */
export function toolsOf(request: GeminiRequest): Pick<LanguageModelV4CallOptions, 'tools' | 'toolChoice'> {
  const declarations = (request.tools ?? []).flatMap((tool) => tool.functionDeclarations ?? []);
  const config = request.toolConfig?.functionCallingConfig;
  const allowed = config?.allowedFunctionNames?.length ? new Set(config.allowedFunctionNames) : undefined;
  const tools = declarations
    .filter((declaration) => !allowed || allowed.has(declaration.name))
    .map(
      (declaration): LanguageModelV4FunctionTool => ({
        type: 'function',
        name: declaration.name,
        description: declaration.description ?? undefined,
        inputSchema:
          (declaration.parametersJsonSchema as LanguageModelV4FunctionTool['inputSchema'] | undefined) ??
          (declaration.parameters
            ? geminiSchemaToJsonSchema(declaration.parameters)
            : { type: 'object', properties: {} }),
      }),
    );
  if (tools.length === 0) return {};
  return { tools, toolChoice: toToolChoice(config?.mode, allowed ? tools : []) };
}

/** `ANY` with a single allowed function names that one; `VALIDATED` is left to the model, as `AUTO`. */
function toToolChoice(
  mode: string | null | undefined,
  allowed: LanguageModelV4FunctionTool[],
): LanguageModelV4ToolChoice | undefined {
  switch (mode) {
    case 'NONE':
      return { type: 'none' };
    case 'ANY':
      return allowed.length === 1 ? { type: 'tool', toolName: allowed[0]!.name } : { type: 'required' };
    case 'AUTO':
    case 'VALIDATED':
      return { type: 'auto' };
    default:
      return undefined;
  }
}
