/** The queues' status under the queue view, with start/stop for the owner (confirmed). */
import { call, get, type Session } from "./api.js";
import { fill, h, table } from "./dom.js";
import { act } from "./ui.js";

interface QueueStatus {
  enabled?: boolean;
  started?: boolean;
  reason?: string;
}

/** A section that loads the queues and, for the owner, offers start/stop on each. */
export function queuesPanel(session: Session): HTMLElement {
  const section = h("section", { "aria-labelledby": "queues-h" }, h("h2", { id: "queues-h" }, "Queues"));
  const load = async () => {
    try {
      const { queues } = await get<{ queues: Record<string, QueueStatus> }>("/queues");
      fill(section, h("h2", { id: "queues-h" }, "Queues"), table("Queues", ["Queue", "Submissions", "Scheduling", ...(session.owner ? ["Action"] : [])],
        Object.entries(queues).map(([name, q]) => [name || "(default)", q.enabled ? "enabled" : "disabled", q.started ? "started" : `stopped${q.reason ? `: ${q.reason}` : ""}`,
          session.owner ? actionButton(name, q, load) : null])));
    } catch (e) {
      fill(section, h("h2", { id: "queues-h" }, "Queues"), h("p", { class: "muted" }, `Queue status unavailable: ${(e as Error).message}`));
    }
  };
  void load();
  return section;
}

function actionButton(name: string, q: QueueStatus, reload: () => Promise<void>): HTMLButtonElement {
  const verb = q.started ? "stop" : "start";
  const label = name || "the default queue";
  return h("button", {
    type: "button",
    class: verb === "stop" ? "danger" : "",
    onclick: async () => {
      const ok = await act(`${verb === "stop" ? "Stop" : "Start"} scheduling ${label}?`, `Queue ${label}: ${verb === "stop" ? "stopped" : "started"}`,
        () => call("POST", `/queues/${verb}`, name ? { name } : {}));
      if (ok) await reload();
    },
  }, `${verb === "stop" ? "Stop" : "Start"} ${label}`);
}
