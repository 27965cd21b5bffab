# input: dump-tree -t fs output. Per objectid: leaves holding each item type.
/^leaf [0-9]+ items/ && !/flags/ { leaf=$2; nleaf++; first=1; next }
/^\titem [0-9]+ key \(/ {
  k=$0; sub(/.*key \(/,"",k); split(k,kk,/[ )]/); o=kk[1]; t=kk[2]
  if (first) { firsttype[t]++; first=0 }
  key=o SUBSEP t
  if (!(key in L)) L[key]=leaf; else if (L[key]!=leaf) span[key]=1
  cnt[key]++
  objs[o]=1
  if (t=="EXTENT_DATA") isfile[o]=1
  if (t=="DIR_ITEM") isdir[o]=1
  next }
END {
  for (t in firsttype) printf "leaves whose first item is %s: %d\n", t, firsttype[t]
  for (o in isfile) { nf++
     if (L[o,"INODE_ITEM"]==L[o,"INODE_REF"] && L[o,"INODE_REF"]==L[o,"EXTENT_DATA"] && !((o,"EXTENT_DATA") in span)) same++
     else if (L[o,"INODE_ITEM"]==L[o,"INODE_REF"]) iir_same++ }
  printf "files with EXTENT_DATA: %d; INODE_ITEM+INODE_REF+EXTENT_DATA in one leaf: %d; only ITEM+REF together: %d\n", nf, same, iir_same
  for (o in isdir) { nd++; a=(o,"DIR_ITEM") in span; b=(o,"DIR_INDEX") in span
     if (!a && !b && L[o,"DIR_ITEM"]==L[o,"DIR_INDEX"]) dsame++
     if (a) dspan++; if (b) ispan++
     if (L[o,"INODE_ITEM"]==L[o,"DIR_ITEM"]) dii++ }
  printf "dirs with entries: %d; all DIR_ITEM and DIR_INDEX in one leaf: %d; DIR_ITEMs span >1 leaf: %d; DIR_INDEXes span >1 leaf: %d; INODE_ITEM in leaf of first DIR_ITEM: %d\n", nd, dsame, dspan, ispan, dii
}
