// A maintainer's photo post, written into a checkout: what a phone gives.
//
//   node tests/support/photos.mjs TREE
//
// writes into TREE (a copy of the checkout):
//   content/images/blog/market-day.jpg   3000 x 2000 camera JPEG, with the
//                                        camera's make and model and a GPS
//                                        position in its EXIF (the cover)
//   content/images/blog/stalls.png       1600 x 1000 PNG (in the text)
//   content/images/blog/portrait.jpg     stored 2000 x 1500 with EXIF
//                                        orientation 6: upright it is 1500 x
//                                        2000, a red band along its top (in
//                                        the text)
//   content/blog/market-day.md           the post, newest of all, naming the
//                                        two text images by paths relative
//                                        to itself
// and prints the files' sizes as JSON on stdout. The pictures have detail
// at every scale, as photos do (noise at five sizes, summed), so they
// weigh what photos weigh.
import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";

export const POST_ID = "market-day";
export const POST = `+++
id = "market-day"
title = "Market Day with the Community Token"
date = "2026-11-14"
author = "Citizen Wallet Team"
type = "Events"
readTime = "3 min read"
excerpt = "Forty stalls, one token: how the Saturday market went, in pictures."
image = "blog/market-day.jpg"
+++

Forty stalls took **the token** on Saturday.

![The stalls along the canal](../images/blog/stalls.png)

The baker was the first to sell out.

![A stallholder, upright](../images/blog/portrait.jpg "The first sale")

See you next month.
`;

/** Raw RGB pixels with detail at every scale. `seed` varies the picture. */
async function texture(width, height, seed) {
  const acc = new Float32Array(width * height * 3);
  let total = 0;
  for (const [div, weight] of [[200, 1], [60, 0.8], [16, 0.6], [4, 0.45], [1, 0.3]]) {
    const w = Math.max(2, Math.round(width / div));
    const h = Math.max(2, Math.round(height / div));
    const noise = await sharp({ create: { width: w, height: h, channels: 3, noise: { type: "gaussian", mean: 128 + seed, sigma: 60 } } })
      .resize(width, height, { kernel: "cubic" })
      .raw()
      .toBuffer();
    for (let i = 0; i < acc.length; i++) acc[i] += (noise[i] - 128) * weight;
    total += weight;
  }
  const out = Buffer.alloc(width * height * 3);
  for (let i = 0; i < acc.length; i++) out[i] = Math.max(0, Math.min(255, 128 + (acc[i] / total) * 1.5));
  return out;
}

export async function writePhotoPost(tree) {
  const dir = path.join(tree, "content", "images", "blog");
  fs.mkdirSync(dir, { recursive: true });
  const files = {};
  const put = (rel, bytes) => {
    fs.writeFileSync(path.join(tree, rel), bytes);
    files[rel] = bytes.length;
  };

  const cover = await texture(3000, 2000, 0);
  put(
    "content/images/blog/market-day.jpg",
    await sharp(cover, { raw: { width: 3000, height: 2000, channels: 3 } })
      .jpeg({ quality: 90 })
      .withExif({
        IFD0: { Make: "Pixelphone", Model: "Pixelphone 9 Pro", Software: "Camera 4.2" },
        IFD2: { DateTimeOriginal: "2026:11:14 10:42:07", BodySerialNumber: "PX9-2214-0071" },
        IFD3: { GPSLatitudeRef: "N", GPSLatitude: "50/1 50/1 4512/100", GPSLongitudeRef: "E", GPSLongitude: "4/1 21/1 1701/100" },
      })
      .toBuffer(),
  );

  const stalls = await texture(1600, 1000, 9);
  put("content/images/blog/stalls.png", await sharp(stalls, { raw: { width: 1600, height: 1000, channels: 3 } }).png().toBuffer());

  // Stored on its side, as a phone held upright stores it: the scene's top
  // is the stored image's left edge (a red band), and orientation 6 says to
  // turn it 90 degrees clockwise.
  const side = await texture(2000, 1500, -9);
  for (let y = 0; y < 1500; y++) {
    for (let x = 0; x < 200; x++) side.set([220, 20, 20], (y * 2000 + x) * 3);
  }
  put(
    "content/images/blog/portrait.jpg",
    await sharp(side, { raw: { width: 2000, height: 1500, channels: 3 } })
      .jpeg({ quality: 90 })
      .withMetadata({ orientation: 6 })
      .withExif({ IFD0: { Make: "Pixelphone", Model: "Pixelphone 9 Pro" }, IFD3: { GPSLatitudeRef: "N", GPSLatitude: "50/1 51/1 0/1" } })
      .toBuffer(),
  );

  fs.writeFileSync(path.join(tree, "content", "blog", `${POST_ID}.md`), POST);
  return files;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const tree = process.argv[2];
  if (!tree) throw new Error("usage: node tests/support/photos.mjs TREE");
  console.log(JSON.stringify(await writePhotoPost(path.resolve(tree))));
}
