/**
 * The one place src/condor imports the ClassAd language from (its public API), so the
 * transform engine depends on a small, named surface of it.
 */
export {
  ClassAd,
  Evaluator,
  literal,
  attrRef,
  parseExpr,
  parseExprPrefix,
  parseNewAd,
  readOldAd,
  unparse,
  unparseValue,
  formatG,
  formatE,
  formatF,
  printOldAd,
  isUndefined,
  isError,
  typeOf,
  builtinEvaluator,
  type Expr,
  type Value,
} from "../classad/index.js";
