const http = require("node:http");
http.createServer((req, res) => res.end("inventory")).listen(3000);
