/**
 * C's printf conversions of doubles (`%.<n>E`, `%.<n>G`, `%.<n>f`), which HTCondor uses to
 * print reals. JavaScript's toExponential/toFixed round an exact decimal tie away from zero;
 * glibc rounds it to even (`printf("%.16G", 1234567890123456.5)` is `1234567890123456`).
 * So when the digits after the cut read `5000…`, the exact binary value decides.
 */

/** Extra digits asked of JavaScript to see whether a cut falls on a possible tie. */
const EXTRA_DIGITS = 25;

/** The significant decimal digits of |x| (finite, non-zero), exactly, trailing zeros dropped. */
function exactDigits(x: number): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const hi = view.getUint32(0);
  const biased = (hi >>> 20) & 0x7ff;
  let mantissa = (BigInt(hi & 0xfffff) << 32n) | BigInt(view.getUint32(4));
  let exp2 = -1074;
  if (biased !== 0) {
    mantissa |= 1n << 52n;
    exp2 = biased - 1075;
  }
  // mantissa · 2^exp2 = mantissa · 5^-exp2 / 10^-exp2: the same digits, another decimal point.
  const n = exp2 >= 0 ? mantissa << BigInt(exp2) : mantissa * 5n ** BigInt(-exp2);
  return n.toString().replace(/0+$/, "");
}

/**
 * Whether a cut after the digits `kept` (followed by `tail`, both as JavaScript printed them
 * with more precision) must round down where JavaScript rounded up: an exact tie whose last
 * kept digit is even.
 */
function roundsDownToEven(x: number, kept: string, tail: string): boolean {
  if (!/^50*$/.test(tail)) return false;
  if (Number(kept[kept.length - 1]) % 2 === 1) return false;
  return exactDigits(x) === (kept + "5").replace(/^0+/, "");
}

/** `x.toExponential(d)` with C's round-half-even on exact ties. */
export function toExponentialC(x: number, d: number): string {
  const js = x.toExponential(d);
  if (!Number.isFinite(x) || x === 0 || d + EXTRA_DIGITS > 100) return js;
  const long = x.toExponential(d + EXTRA_DIGITS);
  const e = long.indexOf("e");
  const digits = long.slice(0, e).replace("-", "").replace(".", "");
  const kept = digits.slice(0, d + 1);
  if (!roundsDownToEven(x, kept, digits.slice(d + 1))) return js;
  return `${x < 0 ? "-" : ""}${kept[0]}${d > 0 ? "." + kept.slice(1) : ""}${long.slice(e)}`;
}

/** C's `%.<p>f` (JavaScript's toFixed with round-half-even on exact ties). */
export function formatF(x: number, p: number): string {
  const js = x.toFixed(p);
  if (!Number.isFinite(x) || x === 0 || Math.abs(x) >= 1e21 || p + EXTRA_DIGITS > 100) return js;
  const long = Math.abs(x).toFixed(p + EXTRA_DIGITS);
  const cut = long.indexOf(".") + 1 + p;
  const kept = long.slice(0, cut).replace(/\.$/, "");
  if (!roundsDownToEven(x, kept.replace(".", ""), long.slice(cut))) return js;
  return (x < 0 ? "-" : "") + kept;
}

/** C's `%1.<digits>E`. */
export function formatE(x: number, digits: number): string {
  const s = toExponentialC(x, digits);
  const i = s.indexOf("e");
  const exp = s.slice(i + 1);
  const sign = exp[0] === "-" ? "-" : "+";
  const mag = exp.replace(/^[+-]/, "");
  return `${s.slice(0, i).toUpperCase()}E${sign}${mag.length < 2 ? "0" + mag : mag}`;
}

/** C's `%.<precision>G`: exponent or fixed form by the exponent, trailing zeros removed. */
export function formatG(x: number, precision: number): string {
  const e = toExponentialC(x, precision - 1);
  const at = e.indexOf("e");
  const exp = Number(e.slice(at + 1));
  if (exp < -4 || exp >= precision) {
    const [mant, ex] = formatE(x, precision - 1).split("E") as [string, string];
    return `${stripZeros(mant)}E${ex}`;
  }
  // %f with precision-1-exp decimals rounds at the same digit as %e did: reuse its digits.
  const neg = x < 0;
  const digits = e.slice(neg ? 1 : 0, at).replace(".", "");
  const fixed = exp >= 0 ? `${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}` : `0.${"0".repeat(-exp - 1)}${digits}`;
  return (neg ? "-" : "") + stripZeros(fixed);
}

function stripZeros(s: string): string {
  if (!s.includes(".")) return s;
  return s.replace(/0+$/, "").replace(/\.$/, "");
}
