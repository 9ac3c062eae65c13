// Images imported from TSX resolve to their hashed URL (esbuild file loader).
declare module "*.svg" {
  const url: string;
  export default url;
}
declare module "*.png" {
  const url: string;
  export default url;
}
