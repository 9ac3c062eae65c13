declare module "core-js-pure/stable/url" {
  const URLImpl: typeof globalThis.URL;
  export default URLImpl;
}
declare module "core-js-pure/stable/url-search-params" {
  const URLSearchParamsImpl: typeof globalThis.URLSearchParams;
  export default URLSearchParamsImpl;
}
