# Turns a text file into a C++ raw string literal include: -DIN=file -DOUT=file.inc
file(READ ${IN} content)
file(WRITE ${OUT} "R\"trialdb_sql(${content})trialdb_sql\"\n")
