/** The view table: hash route name, title, whether it is in the navigation and owner-only. */
import type { Session } from "./api.js";
import { renderCharts } from "./v-charts.js";
import { renderCron } from "./v-cron.js";
import { renderJob } from "./v-job.js";
import { renderPlugins } from "./v-plugins.js";
import { renderQueue } from "./v-queue.js";
import { renderRouter } from "./v-router.js";
import { renderSlots } from "./v-slots.js";

export interface View {
  name: string;
  title: string;
  nav: boolean;
  ownerOnly: boolean;
  /** Draws into main; may return a cleanup run when the view is left. */
  render(main: HTMLElement, session: Session, arg: string): (() => void) | void;
}

export const VIEWS: readonly View[] = [
  { name: "queue", title: "Queue", nav: true, ownerOnly: false, render: renderQueue },
  { name: "job", title: "Job", nav: false, ownerOnly: false, render: renderJob },
  { name: "slots", title: "Slots", nav: true, ownerOnly: false, render: renderSlots },
  { name: "router", title: "Router", nav: true, ownerOnly: false, render: renderRouter },
  { name: "cron", title: "Cron", nav: true, ownerOnly: false, render: renderCron },
  { name: "charts", title: "Charts", nav: true, ownerOnly: false, render: renderCharts },
  { name: "plugins", title: "Plugins", nav: true, ownerOnly: true, render: renderPlugins },
];
