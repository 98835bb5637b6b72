import { parentPort, threadId } from 'node:worker_threads';
import { nestingProblem, renderHtml } from './markdown-core.js';

/*
 * The Markdown worker thread (started by markdown.ts for large content): each message is one piece of work, answered
 * with its id, the thread's id (so tests can tell where the work ran), and its value or the error it threw.
 */
export type MarkdownRequest = { id: number; op: 'render' | 'problem'; content: string };
export type MarkdownReply = { id: number; thread: number } & ({ value: string | null } | { error: string });

const port = parentPort;
port?.on('message', ({ id, op, content }: MarkdownRequest) => {
  let reply: MarkdownReply;
  try {
    reply = { id, thread: threadId, value: op === 'render' ? renderHtml(content) : nestingProblem(content) };
  } catch (err) {
    reply = { id, thread: threadId, error: err instanceof Error ? err.message : String(err) };
  }
  port.postMessage(reply);
});
