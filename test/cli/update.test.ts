/** `jobtap update` argument handling: key aliases, JSON values, absolute and relative durations. */
import { describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import { adjustDuration, parseUpdatePairs, updateKey } from "../../src/cli/update.js";

describe("jobtap update arguments", () => {
  it("maps keys as flux update does", () => {
    expect(updateKey("duration")).toBe("attributes.system.duration");
    expect(updateKey("queue")).toBe("attributes.system.queue");
    expect(updateKey("name")).toBe("attributes.system.job.name");
    expect(updateKey("myattr")).toBe("attributes.system.myattr");
    expect(updateKey("attributes.user.x")).toBe("attributes.user.x");
    expect(updateKey("resources.0.count")).toBe("resources.0.count");
  });

  it("decodes values as JSON where possible and durations as FSD (inf is unlimited, 0)", () => {
    expect(parseUpdatePairs(["a=1", "b=[1,2]", "c=hello", "duration=10m"]).updates).toEqual({
      "attributes.system.a": 1,
      "attributes.system.b": [1, 2],
      "attributes.system.c": "hello",
      "attributes.system.duration": 600,
    });
    expect(parseUpdatePairs(["duration=60"]).updates).toEqual({ "attributes.system.duration": 60 });
    expect(parseUpdatePairs(["duration=inf"]).updates).toEqual({ "attributes.system.duration": 0 });
    expect(parseUpdatePairs(["duration=+1m"]).adjust).toEqual({ sign: 1, seconds: 60 });
    expect(parseUpdatePairs(["duration=-30s"]).adjust).toEqual({ sign: -1, seconds: 30 });
  });

  it("refuses malformed pairs and durations, naming them", () => {
    expect(() => parseUpdatePairs(["duration"])).toThrow('"duration" is not KEY=VALUE');
    expect(() => parseUpdatePairs(["duration=soon"])).toThrow('"duration=soon": "soon" is not a duration');
    expect(() => parseUpdatePairs(["queue=a", "attributes.system.queue=b"])).toThrow('key "attributes.system.queue" given twice');
  });

  it("adjusts a finite duration only, never to zero or below", () => {
    expect(adjustDuration(600, { sign: 1, seconds: 60 }, "ƒx")).toBe(660);
    expect(adjustDuration(600, { sign: -1, seconds: 30 }, "ƒx")).toBe(570);
    expect(() => adjustDuration(0, { sign: 1, seconds: 60 }, "ƒx")).toThrow("ƒx: the job's duration is unlimited");
    expect(() => adjustDuration(30, { sign: -1, seconds: 30 }, "ƒx")).toThrow(expect.objectContaining({ code: ErrorCode.INVALID_ARGUMENT }));
  });
});
