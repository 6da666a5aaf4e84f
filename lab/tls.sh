#!/bin/sh
# Make a throwaway CA and a server certificate signed by it, as a database
# provider would: used by the lab's dbaas container and by the tests' own
# MariaDB. Run in the target folder.
#   tls.sh SERVER_NAME     -> ca.pem ca-key.pem server.pem server-key.pem
set -eu
name=${1:?usage: tls.sh SERVER_NAME}
openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=gpuhpc lab DBaaS CA" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
  -keyout ca-key.pem -out ca.pem 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=$name" -keyout server-key.pem -out server.csr 2>/dev/null
cat > server.ext <<EXT
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectKeyIdentifier=hash
authorityKeyIdentifier=keyid,issuer
subjectAltName=DNS:$name,DNS:localhost,IP:127.0.0.1
EXT
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial \
  -days 3650 -extfile server.ext -out server.pem 2>/dev/null
rm -f server.csr server.ext ca.srl
chmod 0600 ca-key.pem
if getent group mysql >/dev/null 2>&1; then
  chown root:mysql server-key.pem && chmod 0640 server-key.pem
else
  chmod 0600 server-key.pem
fi
