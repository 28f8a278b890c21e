/** Slots and the machine ad, like condor_status: one row per slot, every attribute on demand. */
import { get, type Session } from "./api.js";
import { fill, h } from "./dom.js";
import { errorPage } from "./ui.js";
import { flatText, recordTable, recordsOf } from "./v-generic.js";

/** Renders the slots view from GET /api/v1/ads. */
export function renderSlots(main: HTMLElement, _session: Session): void {
  void get<unknown>("/ads").then((reply) => {
    const r = reply as Record<string, unknown>;
    const slots = recordsOf(reply, "slots", "ads");
    const machine = (r.machine ?? r.machineAd) as Record<string, unknown> | undefined;
    fill(main,
      h("h1", {}, "Slots"),
      recordTable("Slots", slots, [["Name", "name", "Name"], ["State", "state", "State"], ["Activity", "activity", "Activity"], ["Cpus", "Cpus", "cores"], ["Memory", "Memory"], ["Start", "Start"], ["Rank", "Rank"]], "slots"),
      machine ? h("section", { "aria-labelledby": "m-h" }, h("h2", { id: "m-h" }, "Machine ad"), h("pre", { id: "machine-ad" }, flatText(machine))) : null,
    );
  }, (e) => errorPage(main, e, "The slots view"));
}
