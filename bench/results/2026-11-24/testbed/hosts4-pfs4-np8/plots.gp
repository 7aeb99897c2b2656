set datafile missing 'NaN'
set key outside right top box
set grid ytics
do for [fmt in 'svg png'] {
  if (fmt eq 'svg') { set terminal svg size 900,500 dynamic font 'sans,12' }
  else { set terminal pngcairo size 900,500 font 'sans,10' }
  set output 'bandwidth.'.fmt
  set title "End-to-end bandwidth vs writer count (median, min-max bars) - 8 ranks, 64M per step, page cache, 5 reps"
  set xlabel 'writers W'; set ylabel 'MiB/s'
  set logscale x 2; unset logscale y; set xrange [1.53846:10.4]
  set xtics ('2' 2, '4' 4, '8' 8)
  set yrange [0:*]
  plot 'bandwidth.dat' index 0 using 1:2:3:4 with yerrorlines lw 2 pt 5 dt 1 title "independent (default)", \
       'bandwidth.dat' index 1 using 1:2:3:4 with yerrorlines lw 2 pt 7 dt 1 title "fpp", \
       'bandwidth.dat' index 2 using 1:2:3:4 with yerrorlines lw 2 pt 9 dt 1 title "gather", \
       'bandwidth.dat' index 3 using 1:2:3:4 with yerrorlines lw 2 pt 11 dt 1 title "fwdio spread/block", \
       'bandwidth.dat' index 4 using 1:2:3:4 with yerrorlines lw 2 pt 13 dt 1 title "fwdio packed/block", \
       'bandwidth.dat' index 5 using 1:2:3:4 with yerrorlines lw 2 pt 15 dt 1 title "mpiio (default)", \
       'bandwidth.dat' index 6 using 1:2:3:4 with yerrorlines lw 2 pt 17 dt 1 title "iwrite (default)", \
       'bandwidth.dat' index 7 using 1:2:3:4 with yerrorlines lw 2 pt 19 dt 1 title "mpiio (romio321)", \
       'bandwidth.dat' index 8 using 1:2:3:4 with yerrorlines lw 2 pt 21 dt 2 title "fio"
  set output 'blocked.'.fmt
  set title "Blocked time per mode (median, min-max bars; log scale) - 8 ranks, 64M per step, page cache, 5 reps"
  unset logscale x; set autoscale x; set xtics auto; set xlabel ''
  set ylabel 'blocked ms (log)'; set logscale y 10; set yrange [*:*]
  set style data histogram; set style histogram errorbars gap 1.5 lw 1
  set style fill solid 0.7 border -1; set boxwidth 0.9
  plot 'blocked.dat' using 2:3:4:xtic(1) title "memcpy", \
       'blocked.dat' using 5:6:7 title "independent (default)", \
       'blocked.dat' using 8:9:10 title "fpp", \
       'blocked.dat' using 11:12:13 title "gather", \
       'blocked.dat' using 14:15:16 title "fwdio spread/block", \
       'blocked.dat' using 17:18:19 title "fwdio packed/block", \
       'blocked.dat' using 20:21:22 title "mpiio (default)", \
       'blocked.dat' using 23:24:25 title "iwrite (default)", \
       'blocked.dat' using 26:27:28 title "mpiio (romio321)"
  unset logscale y
  set output 'overhead.'.fmt
  set title "Overhead on time to solution (%, median, min-max bars) - 8 ranks, 64M per step, page cache, 5 reps, --steps 4 --compute 0.25"
  set ylabel 'overhead over no output, %'; set yrange [*:*]
  plot 'overhead.dat' using 2:3:4:xtic(1) title "idle [compute]", \
       'overhead.dat' using 5:6:7 title "fwdio spread/block [compute]", \
       'overhead.dat' using 8:9:10 title "fwdio packed/block [compute]", \
       'overhead.dat' using 11:12:13 title "mpiio (default) [compute]", \
       'overhead.dat' using 14:15:16 title "iwrite (default) [compute]"
}
