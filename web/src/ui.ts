/** Shared page pieces: the status line, confirmation, error and login pages. */
import { ApiError } from "./api.js";
import { fill, h } from "./dom.js";

/** Says something in the polite live region (screen readers hear it; tests read it). */
export function status(msg: string): void {
  const el = document.getElementById("status");
  if (el) el.textContent = msg;
}

/** Asks in the page's own <dialog> (no window.confirm: it blocks the page and cannot be styled). */
export function confirmAction(question: string): Promise<boolean> {
  const dialog = document.getElementById("confirm") as HTMLDialogElement;
  (document.getElementById("confirm-text") as HTMLElement).textContent = question;
  dialog.returnValue = "";
  dialog.showModal();
  (document.getElementById("confirm-no") as HTMLButtonElement).focus();
  return new Promise((resolve) => dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true }));
}

/** Runs an action after confirmation, reporting its outcome in the status line. */
export async function act(question: string, done: string, run: () => Promise<unknown>): Promise<boolean> {
  if (!(await confirmAction(question))) return false;
  try {
    await run();
    status(done);
    return true;
  } catch (e) {
    status(`Failed: ${(e as Error).message}`);
    return false;
  }
}

/** The login page: what to run to get in, and why we are here. */
export function loginPage(main: HTMLElement, why: string): void {
  document.title = "jobtap: log in";
  fill(main,
    h("h1", {}, "Log in to jobtap"),
    h("p", {}, "This dashboard needs a session. On the machine running the daemon, run"),
    h("pre", {}, "jobtap web"),
    h("p", {}, "and open the address it prints. The address holds a one-time code valid for a minute; the session it opens lasts until it expires or this tab is closed."),
    why ? h("p", { class: "muted" }, `(${why})`) : null,
  );
}

/** A page for an error: a missing job or route, an owner-only view, or anything else, as text. */
export function errorPage(main: HTMLElement, e: unknown, what = "This page"): void {
  const err = e as ApiError;
  if (err.status === 401) return; // the 401 handler already shows the login page
  if (err.status === 403) {
    document.title = "jobtap: not allowed";
    fill(main, h("h1", {}, "Not allowed"), h("p", {}, `${what} is not visible to your session.`), h("p", { class: "muted" }, err.message));
    return;
  }
  if (err.status === 404) {
    document.title = "jobtap: not found";
    fill(main, h("h1", {}, "Not found"), h("p", {}, `${what} does not exist.`), h("p", { class: "muted" }, err.message), h("p", {}, h("a", { href: "#/queue" }, "Back to the queue")));
    return;
  }
  fill(main, h("h1", {}, "Something went wrong"), h("p", {}, `${what} could not be loaded: ${err.message ?? String(e)}`));
}

/** What a guest sees at an owner view's address. */
export function ownerOnly(main: HTMLElement, detail = ""): void {
  document.title = "jobtap: owner only";
  fill(main,
    h("h1", {}, "Owner only"),
    h("p", {}, "This view is for the instance owner (the user running the daemon). Your session can see the queue, your jobs, slots, the router, cron jobs and charts."),
    detail ? h("p", { class: "muted" }, detail) : null,
  );
}

/** A labelled form control wrapped with its label (so a click on the text focuses it). */
export function labelled(label: string, control: HTMLElement): HTMLLabelElement {
  return h("label", {}, h("span", {}, label), control);
}
