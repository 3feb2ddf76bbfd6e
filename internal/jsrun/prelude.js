// prelude.js runs once in every fresh VM, before any user code. It defines
// nothing new on globalThis: it returns the host's helpers (encode, describe)
// and replaces the few built-ins whose native implementation can allocate
// without bound, recurse past the Go stack, or run for long between two
// interrupt checks (see the package documentation for what remains).
(function (limits, checkSource) {
	"use strict";
	const MAX_STRING = limits.maxString, MAX_ARRAY = limits.maxArray, MAX_BYTES = limits.maxBytes, MAX_DEPTH = limits.maxDepth;
	const G = globalThis, O = Object, R = Reflect;
	const defineProperty = O.defineProperty, getPrototypeOf = O.getPrototypeOf, setPrototypeOf = O.setPrototypeOf;
	const getOwnPropertyDescriptor = O.getOwnPropertyDescriptor, keysOf = O.keys, ownKeys = R.ownKeys;
	const apply = R.apply, construct = R.construct, isArray = Array.isArray, isView = ArrayBuffer.isView;
	const nativeStringify = JSON.stringify, toStr = String, floor = Math.floor, isFinite = Number.isFinite;
	const hide = (obj, key, value) => defineProperty(obj, key, { value, writable: true, configurable: true, enumerable: false });
	const sealProto = (fn, proto) => defineProperty(fn, "prototype", { value: proto, writable: false, enumerable: false, configurable: false });
	const copyStatics = (from, to) => {
		for (const k of ownKeys(from)) {
			if (k !== "prototype" && k !== "length" && k !== "name") defineProperty(to, k, getOwnPropertyDescriptor(from, k));
		}
	};
	const toLen = (v) => { const n = +v; return n > 0 ? floor(n) : 0; };
	delete G.GoError;

	// Strings built in one native step.
	const SP = String.prototype;
	const strErr = (n) => new RangeError("Invalid string length " + n + ": this sandbox caps a string built in one step at " + MAX_STRING + " characters");
	const str = (s) => (s == null || typeof s === "symbol" ? s : toStr(s));
	const repeat = SP.repeat, padStart = SP.padStart, padEnd = SP.padEnd;
	hide(SP, "repeat", { repeat(count) {
		const s = str(this), n = +count;
		if (typeof s === "string" && n > 0 && s.length * floor(n) > MAX_STRING) throw strErr(s.length * floor(n));
		return apply(repeat, s, [count]);
	} }.repeat);
	const pad = (native) => function (maxLength, fill) {
		if (+maxLength > MAX_STRING) throw strErr(+maxLength);
		return apply(native, str(this), arguments);
	};
	hide(SP, "padStart", { padStart: pad(padStart) }.padStart);
	hide(SP, "padEnd", { padEnd: pad(padEnd) }.padEnd);

	// Arrays: a length above MAX_ARRAY cannot be created by the constructor,
	// by species creation (map, filter, slice, concat...) or by Array.from,
	// and fill/join refuse such lengths (set with a.length = n).
	const A = Array, AP = A.prototype;
	const arrErr = (n) => new RangeError("Invalid array length " + n + ": this sandbox caps arrays at " + MAX_ARRAY + " elements");
	const SafeArray = function Array(...args) {
		if (args.length === 1 && typeof args[0] === "number" && args[0] > MAX_ARRAY) throw arrErr(args[0]);
		return construct(A, args, new.target === undefined || new.target === SafeArray ? A : new.target);
	};
	copyStatics(A, SafeArray);
	sealProto(SafeArray, AP);
	const from = A.from;
	hide(SafeArray, "from", { from(items) {
		if (items != null && typeof items === "object" && typeof items[Symbol.iterator] !== "function") {
			const n = toLen(items.length);
			if (n > MAX_ARRAY) throw arrErr(n);
		}
		return apply(from, this === SafeArray || this === undefined ? A : this, arguments);
	} }.from);
	hide(AP, "constructor", SafeArray);
	hide(G, "Array", SafeArray);
	const guardLength = (name) => {
		const native = AP[name];
		hide(AP, name, { [name]() {
			if (this != null && toLen(this.length) > MAX_ARRAY) throw arrErr(toLen(this.length));
			return apply(native, this, arguments);
		} }[name]);
	};
	guardLength("fill");
	guardLength("join");

	// Typed arrays and buffers allocate their whole size at once.
	const bytesErr = (n) => new RangeError("Invalid typed array length " + n + ": this sandbox caps buffers at " + MAX_BYTES + " bytes");
	const AB = ArrayBuffer;
	const SafeArrayBuffer = function ArrayBuffer(length) {
		if (new.target !== undefined && toLen(length) > MAX_BYTES) throw bytesErr(toLen(length));
		return new.target === undefined ? apply(AB, undefined, arguments) : construct(AB, arguments, new.target === SafeArrayBuffer ? AB : new.target);
	};
	copyStatics(AB, SafeArrayBuffer);
	sealProto(SafeArrayBuffer, AB.prototype);
	hide(AB.prototype, "constructor", SafeArrayBuffer);
	hide(G, "ArrayBuffer", SafeArrayBuffer);
	for (const name of ["Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array",
		"Uint32Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array"]) {
		const T = G[name];
		if (typeof T !== "function") continue;
		const per = T.BYTES_PER_ELEMENT;
		const Safe = { [name]: function (a) {
			if (new.target !== undefined) {
				let n = 0;
				if (typeof a === "number") n = toLen(a);
				else if (a !== null && typeof a === "object" && !(a instanceof AB) && typeof a[Symbol.iterator] !== "function") n = toLen(a.length);
				if (n * per > MAX_BYTES) throw bytesErr(n * per);
			}
			return new.target === undefined ? apply(T, undefined, arguments) : construct(T, arguments, new.target === Safe ? T : new.target);
		} }[name];
		setPrototypeOf(Safe, getPrototypeOf(T));
		copyStatics(T, Safe);
		sealProto(Safe, T.prototype);
		hide(T.prototype, "constructor", Safe);
		hide(G, name, Safe);
	}

	// Code compiled at run time goes through the same source checks as the
	// program itself: the goja parser recurses, and is quadratic in nesting.
	const check = (src) => {
		const why = checkSource(src);
		if (why) throw new SyntaxError(why);
	};
	const nativeEval = G.eval;
	// A wrapper makes every eval indirect: it runs in the global scope.
	hide(G, "eval", { eval(src) {
		if (typeof src === "string") check(src);
		return nativeEval(src);
	} }.eval);
	const guardCompiler = (C) => {
		const Safe = function (...args) {
			const parts = [];
			for (let i = 0; i < args.length; i++) { const s = toStr(args[i]); check(s); parts[i] = s; }
			return construct(C, parts, new.target === undefined || new.target === Safe ? C : new.target);
		};
		defineProperty(Safe, "name", { value: C.name });
		setPrototypeOf(Safe, getPrototypeOf(C));
		sealProto(Safe, C.prototype);
		defineProperty(C.prototype, "constructor", { value: Safe, writable: false, enumerable: false, configurable: true });
		return Safe;
	};
	hide(G, "Function", guardCompiler(Function));
	// (goja has no async generators.)
	guardCompiler(getPrototypeOf(async function () {}).constructor);
	guardCompiler(getPrototypeOf(function* () {}).constructor);

	// JSON.stringify checks for cycles in a loop over the nesting stack, so a
	// deep object makes it quadratic in native code; a JS replacer gives the
	// interrupt a chance at every value.
	const identity = function (k, v) { return v; };
	hide(JSON, "stringify", { stringify(value, replacer, space) {
		return nativeStringify(value, typeof replacer === "function" || isArray(replacer) ? replacer : identity, space);
	} }.stringify);

	// encode renders a value as JSON text, stopping soon after budget
	// characters (the host cuts and flags it). Unlike JSON.stringify it never
	// throws: BigInt becomes a string, Map an object (or entry list), Set and
	// typed arrays arrays, errors {name, message}, cycles "[Circular]", and
	// nesting past MAX_DEPTH "[Object]"/"[Array]".
	const quote = (s, budget) => nativeStringify(s.length > budget ? s.slice(0, budget + 1) : s);
	const fnName = (f) => { try { return "[Function: " + (f.name || "anonymous") + "]"; } catch (e) { return "[Function]"; } };
	const errText = (e) => {
		try {
			const name = e.name, msg = e.message;
			return (name === undefined ? "Error" : toStr(name)) + (msg === undefined || msg === "" ? "" : ": " + toStr(msg));
		} catch (x) { return "Error"; }
	};
	const isError = (v) => { try { return v instanceof Error; } catch (e) { return false; } };
	function encode(value, budget) {
		const out = [], stack = [];
		let size = 0, stop = false;
		const push = (s) => { out[out.length] = s; size += s.length; if (size > budget) stop = true; };
		const get = (o, k) => { try { return o[k]; } catch (e) { return "[Thrown: " + describe(e, 200) + "]"; } };
		const skip = (v) => v === undefined || typeof v === "function" || typeof v === "symbol";
		const walk = (v) => {
			if (stop) return;
			if (v === null) return push("null");
			switch (typeof v) {
			case "string": return push(quote(v, budget));
			case "number": return push(isFinite(v) ? toStr(v) : "null");
			case "boolean": return push(v ? "true" : "false");
			case "bigint": return push(quote(toStr(v), budget));
			case "undefined": case "function": case "symbol": return push("null");
			}
			if (stack.indexOf(v) >= 0) return push("\"[Circular]\"");
			const array = isArray(v), typed = isView(v) && !(v instanceof DataView);
			if (stack.length >= MAX_DEPTH) return push(array || typed ? "\"[Array]\"" : "\"[Object]\"");
			const toJSON = get(v, "toJSON");
			if (typeof toJSON === "function") {
				let r;
				try { r = apply(toJSON, v, [""]); } catch (e) { r = "[Thrown: " + describe(e, 200) + "]"; }
				if (typeof r !== "object" || r === null) return walk(r);
				v = r;
			}
			stack[stack.length] = v;
			try {
				if (v instanceof Map) {
					let plain = true;
					for (const k of v.keys()) if (typeof k !== "string" && typeof k !== "number") { plain = false; break; }
					push(plain ? "{" : "[");
					let first = true;
					for (const [k, x] of v) {
						if (stop) break;
						if (plain) {
							if (skip(x)) continue;
							push((first ? "" : ",") + quote(toStr(k), budget) + ":");
						} else {
							push(first ? "[" : ",[");
							walk(k);
							push(",");
						}
						first = false;
						walk(x);
						if (!plain) push("]");
					}
					return push(plain ? "}" : "]");
				}
				if (v instanceof Set) {
					push("[");
					let first = true;
					for (const x of v) {
						if (stop) break;
						if (!first) push(",");
						first = false;
						walk(x);
					}
					return push("]");
				}
				if (array || typed) {
					push("[");
					const n = toLen(get(v, "length"));
					for (let i = 0; i < n && !stop; i++) {
						if (i) push(",");
						walk(get(v, i));
					}
					return push("]");
				}
				if (isError(v)) {
					push("{\"name\":");
					walk(get(v, "name"));
					push(",\"message\":");
					walk(get(v, "message"));
					return push("}");
				}
				push("{");
				let first = true;
				for (const k of keysOf(v)) {
					if (stop) break;
					const x = get(v, k);
					if (skip(x)) continue;
					push((first ? "" : ",") + quote(k, budget) + ":");
					first = false;
					walk(x);
				}
				return push("}");
			} finally {
				stack.length--;
			}
		};
		switch (typeof value) {
		case "undefined": return undefined;
		case "function": return quote(fnName(value), budget);
		case "symbol": return quote(toStr(value), budget);
		}
		walk(value);
		return out.join("");
	}

	// describe renders one console argument as text.
	function describe(v, budget) {
		switch (typeof v) {
		case "string": return v;
		case "undefined": return "undefined";
		case "function": return fnName(v);
		case "symbol": return toStr(v);
		case "bigint": return toStr(v) + "n";
		case "number": case "boolean": return toStr(v);
		}
		if (v !== null && isError(v)) return errText(v);
		try { return encode(v, budget); } catch (e) { return "[unprintable]"; }
	}

	return { encode, describe, errText };
});
