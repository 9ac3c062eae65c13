import type { RouteData } from "./types";

/** Where client-side navigation fetches a route's loader JSON (same JSON the
 *  server embedded in the first page). */
export function dataUrl(url: string): string {
  return `/api/route-data?url=${encodeURIComponent(url)}`;
}

/** Spec section 9: up to 3 retries, delay from 1 s doubling, capped at 30 s. */
export const RETRIES = 3;
export function retryDelay(attempt: number): number {
  return Math.min(1000 * 2 ** attempt, 30_000);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Fetches a route's data, retrying network failures and 5xx answers. A 4xx
 *  answer (such as 404 for an unknown path) is a real answer, not a failure. */
export async function fetchRouteData(url: string, signal?: AbortSignal): Promise<RouteData> {
  let lastError: unknown;
  for (let attempt = 0; attempt <= RETRIES; attempt++) {
    if (attempt > 0) await sleep(retryDelay(attempt - 1));
    if (signal?.aborted) throw new DOMException("aborted", "AbortError");
    try {
      const res = await fetch(dataUrl(url), { headers: { accept: "application/json" }, signal });
      if (res.status < 500) return (await res.json()) as RouteData;
      lastError = new Error(`route data answered ${res.status}`);
    } catch (err) {
      if (signal?.aborted) throw err;
      lastError = err;
    }
  }
  throw lastError;
}
