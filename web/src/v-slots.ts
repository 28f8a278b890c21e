/** Slots and the machine ad, like condor_status: one row per slot, every attribute on demand. */
import { get, type Session } from "./api.js";
import { fill, h } from "./dom.js";
import { errorPage } from "./ui.js";
import { flatText, recordTable, recordsOf } from "./v-generic.js";

/** What every slot ad has; anything else was published by a cron job or the site. */
const BUILTIN = new Set(("MyType Name Machine Arch OpSys TotalCpus TotalGpus TotalMemory TotalDisk TotalSlots TotalLoadAvg LoadAvg MyCurrentTime SlotID " +
  "SlotTypeID Cpus Gpus Memory Disk State Activity EnteredCurrentState EnteredCurrentActivity Start Requirements Rank NumJobs LastUpdate").split(" "));

/** Renders the slots view from GET /api/v1/ads (the slots) and ?machine=1 (the machine ad). */
export function renderSlots(main: HTMLElement, _session: Session): void {
  void Promise.all([get<unknown>("/ads"), get<unknown>("/ads?machine=1")]).then(([reply, machineReply]) => {
    const slots = recordsOf(reply, "ads", "slots").map((r) => ({ ...r, _published: published(r) }));
    const machine = recordsOf(machineReply, "ads")[0];
    fill(main,
      h("h1", {}, "Slots"),
      recordTable("Slots", slots, [["Name"], ["State"], ["Activity"], ["Cpus"], ["Memory"], ["Start"], ["Published attributes", "_published"]], "slots"),
      machine ? h("section", { "aria-labelledby": "m-h" }, h("h2", { id: "m-h" }, "Machine ad"), h("pre", { id: "machine-ad" }, flatText(machine))) : null,
    );
  }, (e) => errorPage(main, e, "The slots view"));
}

/** The attributes a slot ad carries beyond the built-in ones (cron-published), as `A = v` text. */
function published(r: Record<string, unknown>): string {
  const json = (r.json ?? r) as Record<string, unknown>;
  return Object.entries(json).filter(([k]) => !BUILTIN.has(k)).map(([k, v]) => `${k} = ${JSON.stringify(v)}`).join("; ");
}
