// deno_core gives a bare V8 context: no URL, TextEncoder or timers. React and
// React Router only need these to exist for renderToString.
import CoreURL from "core-js-pure/stable/url";
import CoreURLSearchParams from "core-js-pure/stable/url-search-params";

const g = globalThis as Record<string, unknown>;

if (typeof g.URL === "undefined") {
  g.URL = CoreURL;
  g.URLSearchParams = CoreURLSearchParams;
}

if (typeof g.TextEncoder === "undefined") {
  class Utf8Encoder {
    readonly encoding = "utf-8";
    encode(input = ""): Uint8Array {
      const bytes: number[] = [];
      for (const ch of input) {
        const c = ch.codePointAt(0)!;
        if (c < 0x80) bytes.push(c);
        else if (c < 0x800) bytes.push(0xc0 | (c >> 6), 0x80 | (c & 63));
        else if (c < 0x10000) bytes.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
        else bytes.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
      }
      return new Uint8Array(bytes);
    }
  }
  g.TextEncoder = Utf8Encoder;
}

if (typeof g.setTimeout === "undefined") {
  // Work scheduled with setTimeout is never needed for a synchronous render.
  g.setTimeout = () => 0;
  g.clearTimeout = () => {};
}

if (typeof g.console === "undefined") {
  const noop = () => {};
  g.console = { log: noop, info: noop, warn: noop, error: noop, debug: noop };
}

if (typeof g.MessageChannel === "undefined") {
  // React's scheduler probes for MessageChannel at load; a synchronous
  // renderToString never waits on it, so delivery on a microtask is enough.
  class Port {
    onmessage: ((ev: { data: unknown }) => void) | null = null;
    other: Port | null = null;
    postMessage(data: unknown) {
      const target = this.other;
      Promise.resolve().then(() => target?.onmessage?.({ data }));
    }
    close() {}
  }
  g.MessageChannel = class {
    port1 = new Port();
    port2 = new Port();
    constructor() {
      this.port1.other = this.port2;
      this.port2.other = this.port1;
    }
  };
}
