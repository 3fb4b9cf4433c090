import { finish } from "capspec:finish";
import * as action from "capspec:action";
const main = action.default;
const value = typeof main === "function" ? await main() : await main;
finish(value);
