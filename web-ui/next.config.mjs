/**
 * A static export (web-ui/out/), served by `nmafc serve` at / on the API's port.
 * trailingSlash writes explorer/index.html, which the service maps /explorer/ to.
 * @type {import('next').NextConfig}
 */
const config = {
  output: "export",
  trailingSlash: true,
  images: { unoptimized: true },
  reactStrictMode: true,
};

export default config;
