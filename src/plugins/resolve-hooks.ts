/**
 * Node module-resolution hooks (registered with `module.register` by the plugin loader):
 * `jobtap` and `jobtap/plugin` resolve to this jobtap installation from any importing file.
 *
 * Why: Node resolves a bare specifier from the importing file's directory upwards through
 * `node_modules`, and a site plugin in /etc/jobtap/plugins has none — so `import ... from
 * "jobtap/plugin"` failed there, in the plugin's own helper modules, and for `"jobtap"`
 * (the loader's text rewrite only reaches the plugin file itself). A plugin must get the
 * host's own modules in any case: one ClassAd class, one set of error codes.
 *
 * Runs on Node's loader thread; its only state is what `initialize` receives.
 */

/** The file URLs the specifiers resolve to. */
export interface ApiUrls {
  index: string;
  plugin: string;
}

let urls: ApiUrls | undefined;

/** Called once by `module.register(..., { data })`. */
export function initialize(data: ApiUrls): void {
  urls = data;
}

type NextResolve = (specifier: string, context: unknown) => unknown;

/** Maps the two specifiers; everything else goes to Node's own resolution. */
export function resolve(specifier: string, context: unknown, next: NextResolve): unknown {
  if (urls !== undefined) {
    if (specifier === "jobtap") return { url: urls.index, shortCircuit: true };
    if (specifier === "jobtap/plugin") return { url: urls.plugin, shortCircuit: true };
  }
  return next(specifier, context);
}
