/**
 * The one place src/condor imports the ClassAd language from, so the transform engine
 * depends on a small, named surface of it.
 */
export { parseExpr } from "../classad/parser.js";
