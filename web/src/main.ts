/**
 * The dashboard's entry: the `#login=CODE` exchange, the hash router and the navigation.
 * Plain ES modules compiled by tsc, no framework: the whole app is a few small files the
 * browser loads in one round of requests, with nothing to hydrate.
 */
import { ApiError, forget, get, login, token, whenUnauthorized, type Session } from "./api.js";
import { fill, h } from "./dom.js";
import { errorPage, loginPage, ownerOnly, status } from "./ui.js";
import { VIEWS, type View } from "./v-index.js";

let session: Session | undefined;
let cleanup: (() => void) | void;
let shownHash = "";

const main = () => document.getElementById("main") as HTMLElement;

whenUnauthorized((why) => {
  session = undefined;
  stop();
  renderNav();
  loginPage(main(), why);
});

/** Starts the app: a login code in the fragment first, then the session, then the route. */
async function boot(): Promise<void> {
  // The skip link moves focus to the content; as a plain "#main" link it would change the route.
  document.querySelector(".skip")?.addEventListener("click", (ev) => {
    ev.preventDefault();
    main().focus();
  });
  const code = /^#login=([^&]+)/.exec(location.hash)?.[1];
  if (code) {
    history.replaceState(null, "", `${location.pathname}#/queue`);
    try {
      session = await login(decodeURIComponent(code));
    } catch (e) {
      forget();
      return loginPage(main(), `that login code was refused: ${(e as ApiError).message}`);
    }
  }
  if (!token()) return loginPage(main(), "no session yet");
  if (!session) {
    try {
      session = await get<Session>("/whoami");
    } catch (e) {
      return errorPage(main(), e, "Your session");
    }
  }
  renderNav();
  window.addEventListener("hashchange", route);
  route();
}

function stop(): void {
  if (typeof cleanup === "function") cleanup();
  cleanup = undefined;
}

/** Renders the view the hash names (`#/name/arg`). */
function route(): void {
  if (!session) return;
  stop();
  // A re-render of the same view (after an action) keeps the action's outcome on screen.
  if (location.hash !== shownHash) status("");
  shownHash = location.hash;
  const [, name = "queue", ...rest] = location.hash.replace(/^#/, "").split("/");
  const view: View | undefined = VIEWS.find((v) => v.name === (name || "queue"));
  markNav(view?.name);
  const el = main();
  if (!view) {
    fill(el, h("h1", {}, "Not found"), h("p", {}, "There is no such view."), h("p", {}, h("a", { href: "#/queue" }, "Back to the queue")));
    return;
  }
  if (view.ownerOnly && !session.owner) return ownerOnly(el);
  document.title = `jobtap: ${view.title}`;
  fill(el, h("p", {}, "Loading…"));
  cleanup = view.render(el, session, decodeURIComponent(rest.join("/")));
}

function renderNav(): void {
  const nav = document.getElementById("nav") as HTMLElement;
  const who = document.getElementById("who") as HTMLElement;
  if (!session) {
    fill(nav);
    fill(who);
    return;
  }
  const s = session;
  fill(nav, h("ul", {}, ...VIEWS.filter((v) => v.nav && (!v.ownerOnly || s.owner)).map((v) => h("li", {}, h("a", { href: `#/${v.name}`, "data-view": v.name }, v.title)))));
  fill(who, `${s.user}${s.owner ? " (owner)" : ""}`);
}

function markNav(name: string | undefined): void {
  for (const a of document.querySelectorAll<HTMLAnchorElement>("#nav a")) {
    if (a.dataset.view === name) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => void boot());
else void boot();
