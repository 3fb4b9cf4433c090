import { dispatch } from "capspec:host";
export async function call(module, name, args) {
  const reply = await dispatch(module, name, args === undefined ? {} : args);
  if (reply.error !== undefined) {
    const err = new Error(reply.message);
    err.code = reply.error;
    err.capability = reply.capability;
    if (reply.data !== undefined) err.data = reply.data;
    throw err;
  }
  return reply.result;
}
