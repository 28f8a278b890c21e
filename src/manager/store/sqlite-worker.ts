/**
 * The SQLite store's writer thread: owns a second connection to the store's file and writes
 * the batches the manager's thread hands it, one transaction each, in the order received,
 * replying once each is durable. After one failed batch it writes nothing more (a later
 * batch on top of a lost one would store eventlogs with a hole): every later batch gets the
 * same error. "close" closes the connection and ends the thread once earlier batches are done.
 */
import Database from "better-sqlite3";
import { parentPort, workerData } from "node:worker_threads";
import { unpackChunks } from "./wire-text.js";
import { batchWriter, connectionPragmas, type FromWriter, type ToWriter, type WriterData } from "./sqlite-write.js";

const data = workerData as WriterData;
const port = parentPort!;
let db: Database.Database | undefined;
let write: ((rows: Parameters<ReturnType<typeof batchWriter>["write"]>[0]) => void) | undefined;
let failed: string | undefined;

try {
  db = new Database(data.path, { fileMustExist: true });
  connectionPragmas(db, data);
  write = batchWriter(db).write;
} catch (e) {
  failed = (e as Error).message;
}
const ready: FromWriter = failed === undefined ? { kind: "ready" } : { kind: "ready", error: failed };
port.postMessage(ready);

port.on("message", (m: ToWriter) => {
  if (m.kind === "close") {
    db?.close();
    port.close();
    return;
  }
  if (failed === undefined) {
    try {
      write!({ ...m.rows, chunks: unpackChunks(m.text) });
    } catch (e) {
      failed = (e as Error).message;
    }
  }
  const bytes = m.text.bytes;
  const reply: FromWriter = failed === undefined ? { kind: "done", seq: m.rows.seq, bytes } : { kind: "done", seq: m.rows.seq, error: failed, bytes };
  if (data.finished) Atomics.add(data.finished, 0, 1);
  // The text's buffer goes back for a later batch (wire-text.ts).
  port.postMessage(reply, [bytes]);
});
