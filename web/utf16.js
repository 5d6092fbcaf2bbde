// UTF-16 surrogates: the page's strings are UTF-16, the worker's texts are code points and the
// tokens UTF-8, so offsets cross between them wherever a character outside the BMP sits.
export const isHigh = (unit) => unit >= 0xd800 && unit <= 0xdbff;
export const isLow = (unit) => unit >= 0xdc00 && unit <= 0xdfff;
