// Images imported from TSX: an SVG resolves to its hashed URL (esbuild's
// file loader); a photo (JPEG, PNG, WebP, AVIF under content/images/) to the
// image as the build processed it, which only <Picture> draws
// (client/build/bundles.mjs, rasterImports).
declare module "*.svg" {
  const url: string;
  export default url;
}
declare module "*.png" {
  const image: import("./server-types").SiteImage;
  export default image;
}
declare module "*.jpg" {
  const image: import("./server-types").SiteImage;
  export default image;
}
declare module "*.jpeg" {
  const image: import("./server-types").SiteImage;
  export default image;
}
declare module "*.webp" {
  const image: import("./server-types").SiteImage;
  export default image;
}
declare module "*.avif" {
  const image: import("./server-types").SiteImage;
  export default image;
}
