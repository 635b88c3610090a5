import type { LanguageModelV4FunctionTool } from '@ai-sdk/provider';
import { asSchema, InvalidToolInputError, NoSuchToolError, type ToolSet } from 'ai';

/** A tool call's outcome: its output for the model, or why it failed (which the model sees). */
export type ToolOutcome = { ok: true; output: unknown } | { ok: false; error: unknown };

/** The tools as a model call offers them: name, description and the JSON Schema of the input. */
export async function offeredTools(tools: ToolSet): Promise<LanguageModelV4FunctionTool[]> {
  return Promise.all(
    Object.entries(tools).map(async ([name, tool]) => ({
      type: 'function' as const,
      name,
      description: typeof tool.description === 'string' ? tool.description : undefined,
      inputSchema: await asSchema(tool.inputSchema).jsonSchema,
    })),
  );
}

/**
 * Runs one tool call as the model made it: its input parsed and checked against the tool's schema
 * (a call that fails either is answered with why, as the AI SDK words it), then the tool's own
 * code. Never rejects.
 */
export async function callTool(
  tools: ToolSet,
  call: { toolCallId: string; toolName: string; input: unknown },
  abortSignal: AbortSignal,
): Promise<ToolOutcome> {
  const tool = Object.hasOwn(tools, call.toolName) ? tools[call.toolName] : undefined;
  if (!tool?.execute) {
    return {
      ok: false,
      error: new NoSuchToolError({ toolName: call.toolName, availableTools: Object.keys(tools) }),
    };
  }
  const schema = asSchema(tool.inputSchema);
  let input = call.input;
  if (schema.validate) {
    const checked = await schema.validate(input);
    if (!checked.success) {
      const toolInput = JSON.stringify(input);
      return {
        ok: false,
        error: new InvalidToolInputError({ toolName: call.toolName, toolInput, cause: checked.error }),
      };
    }
    input = checked.value;
  }
  try {
    const execute = tool.execute as (input: unknown, options: object) => unknown;
    const output = await execute(input, { toolCallId: call.toolCallId, messages: [], abortSignal });
    return { ok: true, output };
  } catch (error) {
    return { ok: false, error };
  }
}

/** A tool call's input as the model streamed it (JSON text; none is an empty object). */
export function parseToolInput(
  toolName: string,
  text: string,
): { ok: true; value: unknown } | { ok: false; error: Error } {
  if (text.trim() === '') return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (cause) {
    return { ok: false, error: new InvalidToolInputError({ toolName, toolInput: text, cause }) };
  }
}
