// The bench journey as a perfbase script (bench/script_vs_peers.sh): log in once in setup();
// then per iteration create, read and delete an item with the token, each status checked,
// as bench/journey/locustfile.py does.
import http from "perfbase/http";
import { check } from "perfbase";

export async function setup() {
  const res = await http.post("/login", '{"user":"bench","password":"bench"}',
    { headers: { "Content-Type": "application/json" } });
  return { auth: { Authorization: "Bearer " + res.json().access_token, "Content-Type": "application/json" } };
}

export default async function (data) {
  const created = await http.post("/items", '{"name":"x"}', { headers: data.auth, name: "create" });
  if (!check(created, { created: (r) => r.status === 201 })) return;
  const id = created.json().id;
  const read = await http.get("/items/" + id, { headers: data.auth, name: "read" });
  check(read, { read: (r) => r.status === 200 });
  const gone = await http.del("/items/" + id, null, { headers: data.auth, name: "delete" });
  check(gone, { deleted: (r) => r.status === 204 });
}
