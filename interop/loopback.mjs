// Preloaded (node --import) into upstream servers the interop tests start
// over HTTP: every server the process opens listens on 127.0.0.1 only, so a
// test never exposes one beyond the loopback interface (server-everything's
// streamableHttp mode listens on all interfaces and has no host setting).
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))) {
    if (typeof args[1] !== "string") args.splice(1, 0, "127.0.0.1");
    else args[1] = "127.0.0.1";
  } else if (first && typeof first === "object" && first.path === undefined) {
    args[0] = { ...first, host: "127.0.0.1" };
  }
  return listen.apply(this, args);
};
