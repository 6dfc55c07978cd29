# slow.cmake - the unit tests left out of the quick label (`ctest -L quick`, docs/hacking.md): each took 2 s or more
# here (a real ramp, calibration, profile or timeout). CTest reads it after GoogleTest's lists of discovered tests
# (build/tests/gtest_props.cmake, made by tests/CMakeLists.txt), which labels every other one `quick`; a name here
# that names no test would go unnoticed by CTest, and the slow_list test (check_slow_list.py) catches it. Rule: a
# unit test that takes 2 s or more (the time `ctest -L unit` prints) goes here; a script test here (place_schema) is
# labelled plain `unit` where tests/CMakeLists.txt adds it.
set(ibench_slow_unit_tests
  Bin.CtrlCMidRamp
  Bin.PlotWritesAChartAtomically
  Bin.ProbesRunAndReportJson
  Bin.ShortRampJsonCsvTable
  Bin.SigtermMidRamp
  Bin.ValidateReportsAVerdictWithItsReason
  Busy.RampBesideACpuHogIsBusyNotFail
  Busy.RunAndValidateSayBusyBesideAHog
  CalibCache.SweepKeepsRatesThatDoNotDependOnCacheSizes
  CliOpts.ANumberOutOfRangeIsRefused
  CliOpts.AnOptionGivenTwiceIsRefused
  CoreCalibration.IntPeakMatchesAPlainLoop
  CoreSoi.SimdPicksTheWidestIsaAndFallsBack
  DutyOnCpu.IntAt25PercentKeepsItsWorkerUnder35Percent
  DutyOnCpu.PrefetchAt25PercentToo
  Engine.BgHeldPointKeepsTheSoiRunningAllAlong
  Engine.BgWaveAlternatesUntilSet
  ExtenderReplay.OverHttpGivesTheSamePlacements
  ExtenderReplay.SimulatorScenarioGivesTheSamePlacements
  IoBin.CalibrateMeasuresTheFilesystem
  IoBin.DiskFilesAreRemovedOnEveryExit
  IoSoi.DiskSoisPaceEveryDirectionAndCleanUp
  PlaceCluster.SweepSamplingRateAndNoise
  Profile.CputimeCountsTheTargetsOwnCpuTime
  Profile.IoRateProfilesAProgramThatRunsUntilStopped
  Profile.MeasuredFiguresFollowFromTheirSamples
  Profile.PointsNearQoSAreConfirmedWhicheverSideTheyFall
  Profile.ShortRealProfileIsWrittenAndReadBack
  Profile.UsageOverTimeShowsABurstyWritersDutyAndBursts
  ProfileFmt.ShowAndPlotRefuseEveryBadFixtureWithOneLine
  ProfileTimeout.ASampleBesideTheSoIPastItsTimeoutIsABoundAndTheProfileIsWrittenIncomplete
  ProfileTimeout.ASoloSamplePastItsTimeoutStopsTheMeasuringAndKeepsWhatWasMeasured
  ProfileTimeout.TheFirstSamplePastItsTimeoutWritesAProfileOfWhatIsMissing
  XmeterDisk.AnSoiThatWritesHalfWhatItCountsFails
  XmeterDisk.TheRealWriterAgreesWithTheDevice
  place_schema
  validate_schema)
