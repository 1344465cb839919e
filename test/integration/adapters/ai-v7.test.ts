/**
 * agent-pep/ai against `ai` 7.x (installed as the npm alias ai-v7), driven by its own
 * MockLanguageModelV4 and the real dev PDP. The cases are shared with ai.test.ts.
 */
import {
  generateText,
  jsonSchema,
  simulateReadableStream,
  stepCountIs,
  streamText,
  tool,
  wrapLanguageModel,
} from 'ai-v7';
import { MockLanguageModelV4 } from 'ai-v7/test';
import { defineAiCases, type Sdk } from './ai-cases.js';

const sdk = {
  major: 7,
  generateText,
  streamText,
  tool,
  jsonSchema,
  stepCountIs,
  wrapLanguageModel,
  simulateReadableStream,
  mockModel: ({ responses, stream, streams }: Parameters<Sdk['mockModel']>[0]) =>
    new MockLanguageModelV4({
      ...(responses !== undefined ? { doGenerate: responses as never } : {}),
      ...(stream !== undefined ? { doStream: { stream } as never } : {}),
      ...(streams !== undefined ? { doStream: streams.map((s) => ({ stream: s })) as never } : {}),
    }),
} as unknown as Sdk;

defineAiCases(sdk);
