#!/bin/sh
# Checks candidate sources of Unicode normalisation tables against this Node's String.prototype.normalize
# (the reference neardup's normaliser must equal): Debian's libutf8proc-dev (static libutf8proc.a).
# Needs gcc and apt-get download; touches nothing outside a temp dir, which it removes.
# Usage: sh bench/unicode-sources.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT INT TERM
cd "$t"
apt-get download libutf8proc-dev >/dev/null 2>&1
dpkg-deb -x libutf8proc-dev_*.deb x
inc=x/usr/include; lib=x/usr/lib/x86_64-linux-gnu/libutf8proc.a
gcc -O2 -I "$inc" "$here/unicode-sources-cp.c" "$lib" -o cp
gcc -O2 -I "$inc" "$here/unicode-sources-seq.c" "$lib" -o seq
./cp > cp.tsv
node -e "
const fs=require('fs');const hex=(s)=>Buffer.from(s).toString('hex');
console.log('node', process.versions.node, 'unicode', process.versions.unicode, 'icu', process.versions.icu);
const bad={NFC:[],NFKC:[]};
for(const l of fs.readFileSync('cp.tsv','utf8').split('\n')){if(!l)continue;const[h,a,b]=l.split('\t');const c=parseInt(h,16);if(c===0)continue;const s=String.fromCodePoint(c);
 if(hex(s.normalize('NFC'))!==a)bad.NFC.push(h);if(hex(s.normalize('NFKC'))!==b)bad.NFKC.push(h);}
console.log('single code points differing: NFC', bad.NFC.length, 'NFKC', bad.NFKC.length, 'e.g.', bad.NFKC.slice(0,8).join(' '));
const o=[];for(let c=1;c<=0x10ffff;c++){if(c>=0xd800&&c<=0xdfff)continue;const s=String.fromCodePoint(c);const d=s.normalize('NFD');if(d!==s)o.push(hex(d));}
fs.writeFileSync('nfd.txt',o.join('\n')+'\n');"
./seq < nfd.txt > nfc8.txt
node -e "
const fs=require('fs');const i=fs.readFileSync('nfd.txt','utf8').trim().split('\n'),o=fs.readFileSync('nfc8.txt','utf8').trim().split('\n');const bad=[];
i.forEach((h,k)=>{const s=Buffer.from(h,'hex').toString();if(Buffer.from(s.normalize('NFC')).toString('hex')!==o[k])bad.push([...s.normalize('NFC')].map(c=>'U+'+c.codePointAt(0).toString(16).toUpperCase()).join('+'))});
console.log('NFC of the NFD of every decomposable code point: checked', i.length, 'differing', bad.length, 'e.g.', bad.slice(0,10).join(' '));"
